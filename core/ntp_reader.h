// Streams a .ntp recording batch by batch, so files larger than memory can be read.
//
// Every problem is an error whose message starts with the file's path and names the problem
// (wrong magic, newer format, truncation, checksum). A file whose frames are all intact but that
// has no trailer (the agent was killed) reads to its last batch; finalized() tells the caller to
// warn about it.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ntprof/v1/record.pb.h"

namespace ntprof {

struct NtpReadOptions {
  // Read the intact batches of a file whose last frame was cut short instead of refusing it.
  bool salvage = false;
};

class NtpReader {
 public:
  static absl::StatusOr<std::unique_ptr<NtpReader>> Open(const std::string& path,
                                                          NtpReadOptions options = {});

  const std::string& path() const { return path_; }
  const v1::FileHeader& header() const { return header_; }

  // Reads the next batch into *batch. Returns false at the end of the records.
  absl::StatusOr<bool> Next(v1::RecordBatch* batch);

  // Valid once Next() returned false.
  bool finalized() const { return finalized_; }
  bool salvaged() const { return salvaged_; }
  const v1::FileTrailer& trailer() const { return trailer_; }
  uint64_t batches_read() const { return batches_; }
  uint64_t records_read() const { return records_; }

 private:
  NtpReader(std::string path, NtpReadOptions options, uint64_t size)
      : path_(std::move(path)), options_(options), file_size_(size) {}
  absl::Status ReadHeader();
  absl::Status Problem(const std::string& what) const;

  std::string path_;
  NtpReadOptions options_;
  uint64_t file_size_;
  std::ifstream in_;
  uint64_t offset_ = 0;
  v1::FileHeader header_;
  v1::FileTrailer trailer_;
  bool finalized_ = false;
  bool salvaged_ = false;
  bool done_ = false;
  uint64_t batches_ = 0;
  uint64_t records_ = 0;
};

}  // namespace ntprof
