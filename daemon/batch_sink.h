// Where a recording's batches go: a .ntp file (NtpFileSink, `ntprofd record`) or the spool that
// feeds the collector (service/recordings.cpp, `ntprofd serve`).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof {
class NtpWriter;
}

namespace ntprof::agent {

class BatchSink {
 public:
  virtual ~BatchSink() = default;
  virtual absl::Status WriteBatch(const v1::RecordBatch& batch) = 0;
  // A batch the caller no longer needs (a session's share, SessionFanOut): a sink that keeps or
  // changes it takes it without a copy.
  virtual absl::Status WriteOwnedBatch(v1::RecordBatch&& batch) { return WriteBatch(batch); }
  virtual absl::Status Finalize(const v1::FileTrailer& trailer) = 0;
};

class NtpFileSink : public BatchSink {
 public:
  static absl::StatusOr<std::unique_ptr<NtpFileSink>> Create(const std::string& path,
                                                            const v1::FileHeader& header);
  ~NtpFileSink() override;
  absl::Status WriteBatch(const v1::RecordBatch& batch) override;
  absl::Status Finalize(const v1::FileTrailer& trailer) override;

 private:
  explicit NtpFileSink(std::unique_ptr<NtpWriter> writer);
  std::unique_ptr<NtpWriter> writer_;
};

}  // namespace ntprof::agent
