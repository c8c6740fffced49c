#include "ntp_writer.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ntp_format.h"
#include "ntprof_record.h"

namespace ntprof {

absl::StatusOr<std::unique_ptr<NtpWriter>> NtpWriter::Create(const std::string& path,
                                                             const v1::FileHeader& header) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  std::unique_ptr<NtpWriter> writer(new NtpWriter(path, fd));
  std::string body = header.SerializeAsString();
  std::string preamble(ntp::kPreambleBytes, '\0');
  std::memcpy(preamble.data(), ntp::kMagic.data(), ntp::kMagic.size());
  ntp::PutU32(preamble.data() + 8, ntp::kFormatVersion);
  ntp::PutU32(preamble.data() + 12, static_cast<uint32_t>(body.size()));
  ntp::PutU32(preamble.data() + 16, ntp::Crc32(body));
  if (auto st = writer->WriteAll(preamble, body); !st.ok()) return st;
  return writer;
}

NtpWriter::~NtpWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status NtpWriter::WriteAll(std::string_view head, std::string_view body) {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": already finalized"));
  // A frame's header and its payload in one system call, without copying them together.
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()}};
  int first = 0;
  while (first < 2) {
    if (parts[first].iov_len == 0) {
      ++first;
      continue;
    }
    ssize_t n = ::writev(fd_, &parts[first], 2 - first);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::UnavailableError(absl::StrCat(path_, ": write failed: ", std::strerror(errno)));
    }
    for (size_t done = static_cast<size_t>(n); first < 2 && done > 0;) {
      const size_t take = std::min(done, parts[first].iov_len);
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + take;
      parts[first].iov_len -= take;
      done -= take;
      if (parts[first].iov_len == 0) ++first;
    }
  }
  return absl::OkStatus();
}

absl::Status NtpWriter::WriteFrame(uint32_t kind, std::string_view payload) {
  if (payload.size() > ntp::kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": batch of ", payload.size(), " bytes exceeds the frame limit"));
  }
  char header[ntp::kFrameHeaderBytes];
  ntp::PutU32(header, kind);
  ntp::PutU32(header + 4, static_cast<uint32_t>(payload.size()));
  ntp::PutU32(header + 8, ntp::Crc32(payload));
  return WriteAll(std::string_view(header, sizeof(header)), payload);
}

absl::Status NtpWriter::WriteBatch(const v1::RecordBatch& batch) {
  batch.SerializeToString(&payload_);
  return WriteEncodedBatch(payload_, static_cast<uint64_t>(batch.records_size()) +
                                         batch.raw_records().size() / sizeof(ntprof_record));
}

absl::Status NtpWriter::WriteEncodedBatch(std::string_view payload, uint64_t records) {
  if (auto st = WriteFrame(static_cast<uint32_t>(ntp::FrameKind::kBatch), payload); !st.ok()) {
    return st;
  }
  records_ += records;
  ++batches_;
  return absl::OkStatus();
}

absl::Status NtpWriter::Finalize(v1::FileTrailer trailer) {
  trailer.set_records(records_);
  trailer.set_batches(batches_);
  if (auto st = WriteFrame(static_cast<uint32_t>(ntp::FrameKind::kTrailer),
                           trailer.SerializeAsString());
      !st.ok()) {
    return st;
  }
  if (::fsync(fd_) != 0) {
    return absl::UnavailableError(absl::StrCat(path_, ": fsync failed: ", std::strerror(errno)));
  }
  ::close(fd_);
  fd_ = -1;
  return absl::OkStatus();
}

}  // namespace ntprof
