// Collector.Export: streams a session's stored files (SessionExport), one message per write.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ntprof/v1/collector.grpc.pb.h"
#include "session_reports.h"

namespace ntprof::collector {

class ExportReactor final : public grpc::ServerWriteReactor<v1::ExportMessage> {
 public:
  explicit ExportReactor(StoredSession session) : export_(std::move(session)) { WriteNext(); }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::CANCELLED);
      return;
    }
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  void WriteNext();

  SessionExport export_;
  v1::ExportMessage current_;
};

}  // namespace ntprof::collector
