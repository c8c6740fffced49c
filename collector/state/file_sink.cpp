#include "file_sink.h"

#include "session.h"

namespace ntprof::collector {

absl::Status FileSink::OnBatch(Session& session, const AgentKey& agent,
                               const v1::RecordBatch& batch) {
  return session.files->Append(agent, batch);
}

}  // namespace ntprof::collector
