// Spool: the agent's bounded on-disk queue of AgentMessages the collector has not acked yet. It
// also owns the stream's numbering (collector.proto: seq 1, 2, 3 ... within stream_epoch), so the
// numbers and the messages they name survive an agent restart or a kill -9 together.
//
//   <dir>/epoch                    the stream_epoch, hex; a new spool (no such file) = a new epoch
//   <dir>/<first-seq>.seg          segment files, appended: "NTSPOOL1" then frames
//                                  [u32 length][u32 crc32 of payload][AgentMessage]
//
// A segment's name is the first number it was created to hold, so the next number is known even
// when every message was acked and trimmed. Each frame is written with one write(2) and, with
// fsync on, made durable before the sender may send it: a torn tail (machine crash) was therefore
// never sent, and its number may be given out again. When the spool exceeds max_bytes the oldest
// segment is dropped and its unacked numbers are declared lost with a SequenceGap (loss cause
// "spool full"); the gap itself is spooled like any message.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ntprof/v1/collector.pb.h"

namespace ntprof::agent {

struct SpoolOptions {
  std::filesystem::path dir;
  uint64_t max_bytes = 256ull << 20;
  uint64_t segment_bytes = 0;  // 0: max_bytes / 16, within [64 KiB, 16 MiB]
  bool fsync = true;           // durable against a machine crash, not only a process kill
};

struct SpoolStats {
  uint64_t epoch = 0;
  uint64_t last_seq = 0;   // the highest number given out
  uint64_t acked_seq = 0;  // the highest the collector acked (this run)
  uint64_t unacked_messages = 0;
  uint64_t unacked_bytes = 0;
  uint64_t disk_bytes = 0;  // every segment file, acked frames not yet trimmed included
  // Dropped unsent because the spool was full: the records in those batches (the loss cause
  // "spool full", in records like every other cause) and the messages.
  uint64_t spool_full_lost = 0;
  uint64_t spool_full_messages = 0;
  uint64_t torn_frames = 0;  // damaged frames found and cut off when the spool was opened
};

class Spool {
 public:
  static absl::StatusOr<std::unique_ptr<Spool>> Open(SpoolOptions options);
  ~Spool();

  // Numbers the message (seq, and batch.seq for a batch), writes it and returns the number.
  absl::StatusOr<uint64_t> Append(v1::AgentMessage message);
  // The same for a message its caller encodes: encode(seq, out) appends the wire form of an
  // AgentMessage numbered seq (and, for a batch of `records` records, its batch.seq == seq).
  using EncodeFn = std::function<void(uint64_t seq, std::string* out)>;
  absl::StatusOr<uint64_t> AppendEncoded(const EncodeFn& encode, uint32_t records);
  // Gives out one number that will never carry a message and spools its SequenceGap (an agent
  // that died while recording lost the interval it had not written yet).
  absl::StatusOr<uint64_t> DeclareLost(const std::string& reason);
  // The collector holds everything up to seq: drop it (whole segments, once fully acked).
  void Ack(uint64_t seq);

  // The sender's view: frames are numbered by position (0, 1, 2 ... in append order, this run).
  // First position holding something not acked (after a Welcome: where the replay starts).
  uint64_t FirstUnackedPosition() const;
  // The lowest number the spool can still send; every lower one was acked (by some collector)
  // and trimmed.
  uint64_t FirstHeldSeq() const;
  // Up to max messages from position *pos on, skipping acked ones; advances *pos. Waits up to
  // wait_ms for one to arrive when there is none.
  absl::StatusOr<std::vector<v1::AgentMessage>> ReadFrom(uint64_t* pos, size_t max, int wait_ms);
  // The same, each message in its wire form as spooled (the link sends them as they are).
  absl::StatusOr<std::vector<std::string>> ReadFramesFrom(uint64_t* pos, size_t max, int wait_ms);
  // Wakes a ReadFrom that waits (the link is shutting down).
  void Wake();

  SpoolStats Stats() const;
  uint64_t epoch() const { return epoch_; }
  const std::filesystem::path& dir() const { return options_.dir; }

 private:
  struct Frame {
    uint64_t position;
    uint64_t first;    // the lowest number it stands for (gap.first for a gap)
    uint64_t last;     // the highest (its seq, gap.last for a gap)
    uint64_t segment;  // the segment's name
    uint64_t offset;   // of the frame header in the segment file
    uint32_t length;   // payload bytes
    bool gap;
    uint32_t records;  // in a batch
  };
  struct Segment {
    uint64_t name;
    uint64_t bytes = 0;
    uint64_t max_last = 0;
  };

  explicit Spool(SpoolOptions options) : options_(std::move(options)) {}
  absl::Status Load();
  absl::Status Recover(Segment* segment, int fd);
  absl::Status NewSegmentLocked(uint64_t name);
  absl::StatusOr<uint64_t> WriteLocked(const v1::AgentMessage& message, uint64_t first,
                                       uint64_t last, bool gap);
  // Appends one frame whose payload encode appends.
  absl::StatusOr<uint64_t> WriteFrameLocked(const std::function<void(std::string*)>& encode,
                                            uint64_t first, uint64_t last, bool gap,
                                            uint32_t records);
  absl::Status EnforceLimitLocked();
  void TrimLocked();
  std::filesystem::path PathOf(uint64_t segment) const;

  SpoolOptions options_;
  uint64_t epoch_ = 0;
  mutable std::mutex mu_;
  std::condition_variable appended_;
  std::deque<Segment> segments_;  // oldest first; the last one is appended to
  std::deque<Frame> frames_;      // every frame on disk, in file order
  std::string frame_;             // the frame being written (its buffer reused)
  int active_fd_ = -1;
  uint64_t next_position_ = 0;
  uint64_t last_seq_ = 0;
  uint64_t acked_ = 0;
  uint64_t spool_full_lost_ = 0;
  uint64_t spool_full_messages_ = 0;
  uint64_t torn_frames_ = 0;
  uint64_t wake_generation_ = 0;
};

}  // namespace ntprof::agent
