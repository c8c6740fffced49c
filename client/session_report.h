// A session's report as the collector renders it (text, JSON or an HTML page): `report NAME` and
// `run` print it.
#pragma once

#include <string>

#include "collector_target.h"
#include "ntprof/v1/collector.grpc.pb.h"

namespace ntprof::cli {

// Fills *text with the rendering; returns the exit status (the failure said on stderr), also when
// an HTML page was asked for and the collector is too old to render one.
int FetchSessionReport(const std::string& verb, const CollectorFlags& collector,
                       const v1::ReportRequest& request, std::string* text);

}  // namespace ntprof::cli
