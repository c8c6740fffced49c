// Collector.Export: streams a session's stored files (SessionExport), one message per write.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>

#include "ntprof/v1/collector.grpc.pb.h"
#include "session_reports.h"

namespace ntprof::collector {

class ExportReactor final : public grpc::ServerWriteReactor<v1::ExportMessage> {
 public:
  // keep: what must outlive the export (the scratch directory of files fetched from peers).
  explicit ExportReactor(StoredSession session, std::shared_ptr<const void> keep = nullptr)
      : export_(std::move(session)), keep_(std::move(keep)) {
    WriteNext();
  }

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
  std::shared_ptr<const void> keep_;
  v1::ExportMessage current_;
};

}  // namespace ntprof::collector
