// Where a recording's batches go: a .ntp file (NtpFileSink, `ntprofd record`) or the spool that
// feeds the collector (service/recordings.cpp, `ntprofd serve`).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ntprof/v1/record.pb.h"
#include "wire_batch.h"

namespace ntprof {
class NtpWriter;
}

namespace ntprof::agent {

class BatchSink {
 public:
  virtual ~BatchSink() = default;
  virtual absl::Status WriteBatch(const BatchShare& batch) = 0;
  virtual absl::Status Finalize(const v1::FileTrailer& trailer) = 0;
};

// Writes a batch that is a message (tests, tools) to sink.
absl::Status WriteBatchMessage(BatchSink& sink, const v1::RecordBatch& message);

class NtpFileSink : public BatchSink {
 public:
  static absl::StatusOr<std::unique_ptr<NtpFileSink>> Create(const std::string& path,
                                                            const v1::FileHeader& header);
  ~NtpFileSink() override;
  absl::Status WriteBatch(const BatchShare& batch) override;
  absl::Status Finalize(const v1::FileTrailer& trailer) override;

 private:
  explicit NtpFileSink(std::unique_ptr<NtpWriter> writer);
  std::unique_ptr<NtpWriter> writer_;
  std::string payload_;  // reused: a batch's wire form
};

}  // namespace ntprof::agent
