#include "ntp_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ntp_format.h"
#include "raw_records.h"

namespace ntprof {

absl::StatusOr<std::unique_ptr<NtpReader>> NtpReader::Open(const std::string& path,
                                                           NtpReadOptions options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  std::unique_ptr<NtpReader> reader(new NtpReader(path, options, static_cast<uint64_t>(st.st_size)));
  reader->in_.open(path, std::ios::binary);
  if (!reader->in_) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  if (auto s = reader->ReadHeader(); !s.ok()) return s;
  return reader;
}

absl::Status NtpReader::Problem(const std::string& what) const {
  return absl::DataLossError(absl::StrCat(path_, ": ", what));
}

absl::Status NtpReader::ReadHeader() {
  if (file_size_ == 0) return Problem("empty file, not an ntprof recording");
  char pre[ntp::kPreambleBytes];
  in_.read(pre, sizeof pre);
  if (static_cast<size_t>(in_.gcount()) < ntp::kMagic.size() ||
      std::string_view(pre, ntp::kMagic.size()) != ntp::kMagic) {
    return Problem("not an ntprof recording (wrong magic)");
  }
  if (static_cast<size_t>(in_.gcount()) < sizeof pre) {
    return Problem("truncated inside the file header");
  }
  uint32_t version = ntp::GetU32(pre + 8);
  if (version > ntp::kNewestPlausibleFormatVersion) {
    return Problem(absl::StrCat("corrupt file header (format version ", version,
                                " is no ntprof version; this ntprof reads version ",
                                ntp::kFormatVersion, ")"));
  }
  if (version > ntp::kFormatVersion) {
    return Problem(absl::StrCat("format version ", version, " is newer than this ntprof reads (",
                                ntp::kFormatVersion, "); upgrade ntprof"));
  }
  if (version == 0) return Problem("format version 0 is invalid (corrupt header)");
  uint32_t len = ntp::GetU32(pre + 12);
  uint32_t crc = ntp::GetU32(pre + 16);
  if (len > ntp::kMaxHeaderBytes) return Problem(absl::StrCat("corrupt header length ", len));
  if (ntp::kPreambleBytes + uint64_t{len} > file_size_) {
    return Problem("truncated inside the file header");
  }
  std::string body(len, '\0');
  in_.read(body.data(), len);
  if (ntp::Crc32(body) != crc) return Problem("corrupt file header (checksum mismatch)");
  if (!header_.ParseFromString(body)) return Problem("corrupt file header (cannot decode)");
  offset_ = ntp::kPreambleBytes + len;
  return absl::OkStatus();
}

absl::StatusOr<bool> NtpReader::Next(v1::RecordBatch* batch) {
  while (!done_) {
    if (offset_ == file_size_) {  // intact frames only, no trailer: the writer did not close it
      done_ = true;
      break;
    }
    auto truncated = [&](uint64_t frame_at) -> absl::StatusOr<bool> {
      if (options_.salvage) {
        salvaged_ = true;
        done_ = true;
        return false;
      }
      return Problem(absl::StrCat("truncated: the frame at byte ", frame_at,
                                  " is cut short (file ends at byte ", file_size_, ", after ",
                                  batches_, " intact batches); pass --salvage to read those"));
    };
    uint64_t frame_at = offset_;
    if (file_size_ - offset_ < ntp::kFrameHeaderBytes) return truncated(frame_at);
    char fh[ntp::kFrameHeaderBytes];
    in_.read(fh, sizeof fh);
    uint32_t kind = ntp::GetU32(fh);
    uint32_t len = ntp::GetU32(fh + 4);
    uint32_t crc = ntp::GetU32(fh + 8);
    if (kind != static_cast<uint32_t>(ntp::FrameKind::kBatch) &&
        kind != static_cast<uint32_t>(ntp::FrameKind::kTrailer)) {
      return Problem(absl::StrCat("corrupt frame at byte ", frame_at, " (unknown kind ", kind, ")"));
    }
    if (len > ntp::kMaxFrameBytes) {
      return Problem(absl::StrCat("corrupt frame at byte ", frame_at, " (length ", len, ")"));
    }
    if (file_size_ - offset_ - ntp::kFrameHeaderBytes < len) return truncated(frame_at);
    std::string payload(len, '\0');
    in_.read(payload.data(), len);
    if (static_cast<uint32_t>(in_.gcount()) != len) return truncated(frame_at);
    offset_ += ntp::kFrameHeaderBytes + len;
    if (ntp::Crc32(payload) != crc) {
      return Problem(absl::StrCat("corrupt frame at byte ", frame_at, " (checksum mismatch)"));
    }
    if (kind == static_cast<uint32_t>(ntp::FrameKind::kTrailer)) {
      if (!trailer_.ParseFromString(payload)) {
        return Problem(absl::StrCat("corrupt trailer at byte ", frame_at));
      }
      if (offset_ != file_size_) {
        return Problem(absl::StrCat("data after the trailer at byte ", offset_));
      }
      if (trailer_.batches() != batches_ || trailer_.records() != records_) {
        return Problem(absl::StrCat("trailer counts ", trailer_.records(), " records in ",
                                    trailer_.batches(), " batches but the file holds ", records_,
                                    " in ", batches_));
      }
      finalized_ = true;
      done_ = true;
      break;
    }
    if (!batch->ParseFromString(payload)) {
      return Problem(absl::StrCat("corrupt batch at byte ", frame_at, " (cannot decode)"));
    }
    if (absl::Status raw = ExpandRawRecords(batch); !raw.ok()) {
      return Problem(absl::StrCat("batch at byte ", frame_at, ": ", raw.message()));
    }
    ++batches_;
    records_ += static_cast<uint64_t>(batch->records_size());
    return true;
  }
  return false;
}

}  // namespace ntprof
