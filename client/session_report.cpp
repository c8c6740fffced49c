#include "session_report.h"

#include "exit_codes.h"
#include "html_page.h"

namespace ntprof::cli {

int FetchSessionReport(const std::string& verb, const CollectorFlags& collector,
                       const v1::ReportRequest& request, std::string* text) {
  return WithCollector<v1::Collector>(verb, collector, [&](auto& stub, auto& target) {
    v1::RenderedOutput output;
    const grpc::Status status = stub.Report(UnaryContext().get(), request, &output);
    if (!status.ok()) return RpcFailure(verb, target, status);
    if (request.format() == v1::OUTPUT_HTML && !IsHtmlPage(output.text())) {
      return OldCollectorAnswer(verb);
    }
    *text = output.text();
    return kOk;
  });
}

}  // namespace ntprof::cli
