#include "spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ntp_format.h"
#include "spdlog/spdlog.h"

namespace ntprof::agent {
namespace {

constexpr char kMagic[8] = {'N', 'T', 'S', 'P', 'O', 'O', 'L', '1'};
constexpr uint32_t kMaxFrame = 64u << 20;  // a longer length field is damage, not a message
constexpr const char* kSegmentSuffix = ".seg";

absl::Status Errno(const std::string& what, const std::filesystem::path& path) {
  return absl::UnavailableError(
      absl::StrCat(what, " ", path.string(), ": ", std::strerror(errno),
                   "; check that the spool directory is writable and its disk not full"));
}

bool ReadFull(int fd, void* buf, size_t n, uint64_t offset) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = pread(fd, p, n, static_cast<off_t>(offset));
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

bool WriteFull(int fd, const std::string& data) {
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

uint64_t NewEpoch() {
  std::random_device rd;
  uint64_t e = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
               static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  return e == 0 ? 1 : e;
}

}  // namespace

std::filesystem::path Spool::PathOf(uint64_t segment) const {
  return options_.dir / absl::StrFormat("%020u%s", segment, kSegmentSuffix);
}

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(SpoolOptions options) {
  if (options.segment_bytes == 0)
    options.segment_bytes = std::clamp<uint64_t>(options.max_bytes / 16, 64 << 10, 16 << 20);
  std::unique_ptr<Spool> spool(new Spool(std::move(options)));
  if (absl::Status st = spool->Load(); !st.ok()) return st;
  return spool;
}

Spool::~Spool() {
  if (active_fd_ >= 0) close(active_fd_);
}

absl::Status Spool::Load() {
  const std::filesystem::path& dir = options_.dir;
  std::error_code ec;
  // The records name devices and block addresses: only the agent reads its spool.
  if (std::filesystem::create_directories(dir, ec))
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot create the spool directory ", dir.string(),
                                               ": ", ec.message(), "; pass --spool-dir"));
  }
  std::vector<uint64_t> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    uint64_t name = 0;
    if (entry.path().extension() == kSegmentSuffix &&
        absl::SimpleAtoi(entry.path().stem().string(), &name)) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());

  const std::filesystem::path epoch_path = dir / "epoch";
  std::ifstream epoch_in(epoch_path);
  std::string epoch_text;
  if (!(epoch_in >> epoch_text) || !absl::SimpleHexAtoi(epoch_text, &epoch_)) {
    // No epoch: the numbers of any segment left here mean nothing to the collector.
    for (uint64_t n : names) std::filesystem::remove(PathOf(n), ec);
    names.clear();
    epoch_ = NewEpoch();
    const std::filesystem::path tmp = dir / "epoch.tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << absl::StrFormat("%016x\n", epoch_);
      if (!out.flush()) return Errno("cannot write", tmp);
    }
    std::filesystem::rename(tmp, epoch_path, ec);
    if (ec) return Errno("cannot rename", tmp);
  }

  for (uint64_t name : names) {
    int fd = ::open(PathOf(name).c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return Errno("cannot open", PathOf(name));
    Segment segment{.name = name};
    absl::Status st = Recover(&segment, fd);
    close(fd);
    if (!st.ok()) return st;
    last_seq_ = std::max({last_seq_, name - 1, segment.max_last});
    segments_.push_back(segment);
  }
  if (segments_.empty()) return NewSegmentLocked(last_seq_ + 1);
  active_fd_ = ::open(PathOf(segments_.back().name).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (active_fd_ < 0) return Errno("cannot open", PathOf(segments_.back().name));
  return absl::OkStatus();
}

// Reads every frame of a segment; the first damaged one and everything after it is cut off.
absl::Status Spool::Recover(Segment* segment, int fd) {
  const std::filesystem::path path = PathOf(segment->name);
  struct stat st;
  if (fstat(fd, &st) != 0) return Errno("cannot stat", path);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  char magic[sizeof(kMagic)];
  uint64_t offset = sizeof(kMagic);
  if (size < sizeof(kMagic) || !ReadFull(fd, magic, sizeof(magic), 0) ||
      std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    // Killed between create and the magic: an empty segment (its name still counts).
    if (size > 0) ++torn_frames_;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, kMagic, sizeof(kMagic), 0) != sizeof(kMagic))
      return Errno("cannot repair", path);
    segment->bytes = sizeof(kMagic);
    return absl::OkStatus();
  }
  while (offset < size) {
    uint32_t head[2];
    v1::AgentMessage message;
    std::string payload;
    bool good = offset + sizeof(head) <= size && ReadFull(fd, head, sizeof(head), offset) &&
                head[0] <= kMaxFrame && offset + sizeof(head) + head[0] <= size;
    if (good) {
      payload.resize(head[0]);
      good = ReadFull(fd, payload.data(), payload.size(), offset + sizeof(head)) &&
             ntp::Crc32(payload) == head[1] && message.ParseFromString(payload);
    }
    if (!good) {
      ++torn_frames_;
      if (ftruncate(fd, static_cast<off_t>(offset)) != 0) return Errno("cannot truncate", path);
      break;
    }
    const bool gap = message.has_gap();
    Frame f{.position = next_position_++,
            .first = gap ? message.gap().first() : message.seq(),
            .last = gap ? message.gap().last() : message.seq(),
            .segment = segment->name,
            .offset = offset,
            .length = head[0],
            .gap = gap,
            .records = static_cast<uint32_t>(message.batch().batch().records_size())};
    segment->max_last = std::max(segment->max_last, f.last);
    frames_.push_back(f);
    offset += sizeof(head) + head[0];
  }
  segment->bytes = offset;
  return absl::OkStatus();
}

absl::Status Spool::NewSegmentLocked(uint64_t name) {
  const std::filesystem::path path = PathOf(name);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) return Errno("cannot create", path);
  if (!WriteFull(fd, std::string(kMagic, sizeof(kMagic)))) {
    close(fd);
    return Errno("cannot write", path);
  }
  if (options_.fsync) {
    // The name carries the next number: it must survive a crash once the old segments are gone.
    fsync(fd);
    int dfd = ::open(options_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  }
  if (active_fd_ >= 0) close(active_fd_);
  active_fd_ = fd;
  segments_.push_back(Segment{.name = name, .bytes = sizeof(kMagic)});
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Spool::WriteLocked(const v1::AgentMessage& message, uint64_t first,
                                            uint64_t last, bool gap) {
  return WriteFrameLocked(
      [&](std::string* out) { message.AppendToString(out); }, first, last, gap,
      static_cast<uint32_t>(message.batch().batch().records_size()));
}

absl::StatusOr<uint64_t> Spool::WriteFrameLocked(const std::function<void(std::string*)>& encode,
                                                 uint64_t first, uint64_t last, bool gap,
                                                 uint32_t records) {
  Segment* active = &segments_.back();
  // Roll when the active segment is full, or when all it holds is acked (so Ack can delete it).
  const bool all_acked = active->bytes > sizeof(kMagic) && active->max_last <= acked_;
  if (active->bytes >= options_.segment_bytes || all_acked) {
    if (absl::Status st = NewSegmentLocked(last_seq_ + 1); !st.ok()) return st;
    TrimLocked();
    active = &segments_.back();
  }
  // The frame is built in one buffer, the payload encoded after room for its head.
  uint32_t head[2];
  std::string& frame = frame_;
  frame.assign(sizeof(head), '\0');
  encode(&frame);
  const std::string_view payload = std::string_view(frame).substr(sizeof(head));
  head[0] = static_cast<uint32_t>(payload.size());
  head[1] = ntp::Crc32(payload);
  std::memcpy(frame.data(), head, sizeof(head));
  if (!WriteFull(active_fd_, frame)) return Errno("cannot append to", PathOf(active->name));
  if (options_.fsync && fdatasync(active_fd_) != 0)
    return Errno("cannot sync", PathOf(active->name));
  frames_.push_back(
      Frame{.position = next_position_++,
            .first = first,
            .last = last,
            .segment = active->name,
            .offset = active->bytes,
            .length = static_cast<uint32_t>(payload.size()),
            .gap = gap,
            .records = records});
  active->bytes += frame.size();
  active->max_last = std::max(active->max_last, last);
  appended_.notify_all();
  return last;
}

absl::StatusOr<uint64_t> Spool::Append(v1::AgentMessage message) {
  const auto records = static_cast<uint32_t>(message.batch().batch().records_size());
  return AppendEncoded(
      [&](uint64_t seq, std::string* out) {
        message.set_seq(seq);
        if (message.has_batch()) message.mutable_batch()->mutable_batch()->set_seq(seq);
        message.AppendToString(out);
      },
      records);
}

absl::StatusOr<uint64_t> Spool::AppendEncoded(const EncodeFn& encode, uint32_t records) {
  std::lock_guard lock(mu_);
  const uint64_t seq = last_seq_ + 1;
  auto written = WriteFrameLocked([&](std::string* out) { encode(seq, out); }, seq, seq, false,
                                  records);
  if (!written.ok()) return written.status();
  last_seq_ = seq;
  if (absl::Status st = EnforceLimitLocked(); !st.ok()) return st;
  return seq;
}

absl::StatusOr<uint64_t> Spool::DeclareLost(const std::string& reason) {
  std::lock_guard lock(mu_);
  const uint64_t seq = last_seq_ + 1;
  v1::AgentMessage message;
  message.mutable_gap()->set_first(seq);
  message.mutable_gap()->set_last(seq);
  message.mutable_gap()->set_reason(reason);
  auto written = WriteLocked(message, seq, seq, true);
  if (!written.ok()) return written.status();
  last_seq_ = seq;
  return seq;
}

// Oldest segments go first; what they held unacked is declared as one gap (a gap frame dropped
// with them is folded into the new one, so the declared range stays whole).
absl::Status Spool::EnforceLimitLocked() {
  uint64_t total = 0;
  for (const Segment& s : segments_) total += s.bytes;
  uint64_t first = UINT64_MAX, last = 0, dropped = 0, records = 0;
  while (total > options_.max_bytes && segments_.size() > 1) {
    const Segment oldest = segments_.front();
    segments_.pop_front();
    total -= oldest.bytes;
    while (!frames_.empty() && frames_.front().segment == oldest.name) {
      const Frame& f = frames_.front();
      if (f.last > acked_) {
        first = std::min(first, std::max(f.first, acked_ + 1));
        last = std::max(last, f.last);
        if (!f.gap) ++dropped;
        records += f.records;
      }
      frames_.pop_front();
    }
    std::error_code ec;
    std::filesystem::remove(PathOf(oldest.name), ec);
  }
  if (last == 0) return absl::OkStatus();
  spool_full_lost_ += records;
  spool_full_messages_ += dropped;
  spdlog::warn(
      "spool full ({} bytes): dropped seq {}..{} unsent ({} batch(es), {} records); "
      "declared to the collector as lost",
      options_.max_bytes, first, last, dropped, records);
  v1::AgentMessage gap;
  gap.mutable_gap()->set_first(first);
  gap.mutable_gap()->set_last(last);
  gap.mutable_gap()->set_reason("spool full");
  return WriteLocked(gap, first, last, true).status();
}

void Spool::TrimLocked() {
  while (segments_.size() > 1 && segments_.front().max_last <= acked_) {
    const uint64_t name = segments_.front().name;
    while (!frames_.empty() && frames_.front().segment == name) frames_.pop_front();
    segments_.pop_front();
    std::error_code ec;
    std::filesystem::remove(PathOf(name), ec);
  }
}

void Spool::Ack(uint64_t seq) {
  std::lock_guard lock(mu_);
  if (seq <= acked_) return;
  acked_ = seq;
  // The collector holds numbers this spool lost (a crash without fsync): never give them out
  // again, they would be discarded as duplicates.
  last_seq_ = std::max(last_seq_, seq);
  TrimLocked();
}

uint64_t Spool::FirstUnackedPosition() const {
  std::lock_guard lock(mu_);
  for (const Frame& f : frames_) {
    if (f.last > acked_) return f.position;
  }
  return next_position_;
}

uint64_t Spool::FirstHeldSeq() const {
  std::lock_guard lock(mu_);
  uint64_t first = last_seq_ + 1;
  for (const Frame& f : frames_) {
    if (f.last > acked_) first = std::min(first, std::max(f.first, acked_ + 1));
  }
  return first;
}

absl::StatusOr<std::vector<v1::AgentMessage>> Spool::ReadFrom(uint64_t* pos, size_t max,
                                                              int wait_ms) {
  auto frames = ReadFramesFrom(pos, max, wait_ms);
  if (!frames.ok()) return frames.status();
  std::vector<v1::AgentMessage> out(frames->size());
  for (size_t i = 0; i < frames->size(); ++i) {
    if (!out[i].ParseFromString((*frames)[i]))
      return absl::DataLossError(absl::StrCat("spool ", options_.dir.string(),
                                              ": a frame is not an AgentMessage"));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> Spool::ReadFramesFrom(uint64_t* pos, size_t max,
                                                               int wait_ms) {
  std::unique_lock lock(mu_);
  if (*pos >= next_position_) {
    const uint64_t generation = wake_generation_;
    appended_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                       [&] { return *pos < next_position_ || generation != wake_generation_; });
  }
  std::vector<std::string> out;
  // Frames dropped (acked, or spool full) before the reader got there are skipped.
  auto it = std::lower_bound(frames_.begin(), frames_.end(), *pos,
                             [](const Frame& f, uint64_t p) { return f.position < p; });
  int fd = -1;
  uint64_t fd_segment = 0;
  for (; it != frames_.end() && out.size() < max; ++it) {
    *pos = it->position + 1;
    if (it->last <= acked_) continue;
    if (fd < 0 || fd_segment != it->segment) {
      if (fd >= 0) close(fd);
      fd = ::open(PathOf(it->segment).c_str(), O_RDONLY | O_CLOEXEC);
      fd_segment = it->segment;
      if (fd < 0) return Errno("cannot open", PathOf(it->segment));
    }
    // Checked against its CRC: the link sends these bytes without decoding them.
    uint32_t head[2];
    std::string& payload = out.emplace_back(it->length, '\0');
    if (!ReadFull(fd, head, sizeof(head), it->offset) ||
        !ReadFull(fd, payload.data(), payload.size(), it->offset + sizeof(head)) ||
        head[0] != it->length || head[1] != ntp::Crc32(payload)) {
      close(fd);
      return absl::DataLossError(
          absl::StrCat("spool segment ", PathOf(it->segment).string(), " changed under the agent"));
    }
  }
  if (it == frames_.end()) *pos = std::max(*pos, next_position_);
  if (fd >= 0) close(fd);
  return out;
}

void Spool::Wake() {
  std::lock_guard lock(mu_);
  ++wake_generation_;
  appended_.notify_all();
}

SpoolStats Spool::Stats() const {
  std::lock_guard lock(mu_);
  SpoolStats s;
  s.epoch = epoch_;
  s.last_seq = last_seq_;
  s.acked_seq = acked_;
  for (const Segment& seg : segments_) s.disk_bytes += seg.bytes;
  for (const Frame& f : frames_) {
    if (f.last <= acked_) continue;
    ++s.unacked_messages;
    s.unacked_bytes += f.length + 8;
  }
  s.spool_full_lost = spool_full_lost_;
  s.spool_full_messages = spool_full_messages_;
  s.torn_frames = torn_frames_;
  return s;
}

}  // namespace ntprof::agent
