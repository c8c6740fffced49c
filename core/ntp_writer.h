// Writes a .ntp recording: header first, then one frame per RecordBatch, then a trailer.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof {

class NtpWriter {
 public:
  // Creates (or truncates) `path` and writes the header.
  static absl::StatusOr<std::unique_ptr<NtpWriter>> Create(const std::string& path,
                                                           const v1::FileHeader& header);
  ~NtpWriter();
  NtpWriter(const NtpWriter&) = delete;
  NtpWriter& operator=(const NtpWriter&) = delete;

  // Appends one batch (frame header and payload) in a single writev(2): after a SIGKILL the file
  // is readable up to here.
  absl::Status WriteBatch(const v1::RecordBatch& batch);
  // The same for a batch already in wire form (the serialized v1.RecordBatch) of `records`
  // records: the agent encodes its batches itself.
  absl::Status WriteEncodedBatch(std::string_view payload, uint64_t records);
  // Appends the trailer (record and batch counts are filled in), syncs and closes the file.
  absl::Status Finalize(v1::FileTrailer trailer);

  uint64_t records_written() const { return records_; }
  uint64_t batches_written() const { return batches_; }
  const std::string& path() const { return path_; }

 private:
  NtpWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  absl::Status WriteAll(std::string_view head, std::string_view body);
  absl::Status WriteFrame(uint32_t kind, std::string_view payload);

  std::string path_;
  int fd_ = -1;
  uint64_t records_ = 0;
  uint64_t batches_ = 0;
  // Kept between batches: a batch is ~1 MB, and fresh buffers each time cost page faults.
  std::string payload_;
};

}  // namespace ntprof
