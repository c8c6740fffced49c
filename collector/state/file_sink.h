// The session's files (SessionFiles): every batch is written before any other sink sees it, and a
// batch that cannot be written is not acked (the agent replays it).
#pragma once

#include "session_sink.h"

namespace ntprof::collector {

class FileSink : public SessionSink {
 public:
  absl::Status OnBatch(Session& session, const AgentKey& agent,
                       const v1::RecordBatch& batch) override;
};

}  // namespace ntprof::collector
