#include "batch_sink.h"

#include "ntp_writer.h"

namespace ntprof::agent {

absl::Status WriteBatchMessage(BatchSink& sink, const v1::RecordBatch& message) {
  const WireBatch batch = WireBatch::FromMessage(message);
  return sink.WriteBatch(BatchShare(batch, batch.extras()));
}

NtpFileSink::NtpFileSink(std::unique_ptr<NtpWriter> writer) : writer_(std::move(writer)) {}
NtpFileSink::~NtpFileSink() = default;

absl::StatusOr<std::unique_ptr<NtpFileSink>> NtpFileSink::Create(const std::string& path,
                                                                 const v1::FileHeader& header) {
  auto writer = NtpWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  return std::unique_ptr<NtpFileSink>(new NtpFileSink(std::move(*writer)));
}

absl::Status NtpFileSink::WriteBatch(const BatchShare& batch) {
  payload_.clear();
  batch.AppendTo(&payload_);
  return writer_->WriteEncodedBatch(payload_, batch.size());
}

absl::Status NtpFileSink::Finalize(const v1::FileTrailer& trailer) {
  return writer_->Finalize(trailer);
}

}  // namespace ntprof::agent
