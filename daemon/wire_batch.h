// A recording's batch in wire form, and the share of it one sink gets.
//
// WireBatch holds each record's ntprof.v1.Record bytes, encoded once as the record arrives
// (EncodeRecord), beside what the split among sessions and collectors looks at (the sampling
// fields, the earliest stamp, the identity). A BatchShare is some or all of those records with the
// seq, device counters and losses of the sink it goes to; a sink writes it as the bytes of a
// v1.RecordBatch by copying byte ranges. Nothing is built as a message, copied per session or per
// collector, or serialized again (docs/overhead.md, "The agent's work per record").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/arena.h>

#include "ntprof/v1/record.pb.h"
#include "ntprof_record.h"
#include "record_converter.h"

namespace ntprof::agent {

class WireBatch {
 public:
  struct Entry {
    uint32_t offset = 0;  // of the record's bytes in the batch
    uint32_t length = 0;
    uint32_t identity = 0;  // index into the batch's identities
    // The command's sampling fields (ntprof_sampled) and its earliest stamp.
    uint8_t opcode = 0;
    uint16_t cid = 0;
    uint32_t nsid = 0;
    uint32_t nlb = 0;
    uint64_t slba = 0;
    uint64_t earliest_stamp = 0;
  };

  void Add(const ntprof_record& rec, const std::shared_ptr<const EncodedIdentity>& identity);
  // A batch that already is a message (tests, tools): its records are serialized one by one, its
  // seq, counters and losses become the extras.
  static WireBatch FromMessage(const v1::RecordBatch& message);

  size_t size() const { return entries_.size(); }
  const Entry& entry(size_t i) const { return entries_[i]; }
  const RecordIdentity& identity(const Entry& e) const { return identities_[e.identity]->identity; }
  std::string_view bytes(const Entry& e) const {
    return std::string_view(records_).substr(e.offset, e.length);
  }
  // Keep each record as BPF gave it too, for ToMessage (off: it decodes the wire form, which costs
  // three times as much; on, the copy costs about 300 instructions a record).
  void KeepRaw(bool keep) { keep_raw_ = keep; }
  // The i-th record as BPF gave it (null unless kept), and its identity.
  const ntprof_record* raw(size_t i) const { return i < raw_.size() ? &raw_[i] : nullptr; }
  const EncodedIdentity& encoded_identity(const Entry& e) const { return *identities_[e.identity]; }
  // The batch's seq, device counters and losses: a v1.RecordBatch without records.
  v1::RecordBatch& extras() { return extras_; }
  const v1::RecordBatch& extras() const { return extras_; }
  // Empties it for the next batch; the buffers keep their capacity.
  void Clear();

 private:
  std::string records_;
  std::vector<Entry> entries_;
  bool keep_raw_ = false;
  std::vector<ntprof_record> raw_;  // for ToMessage: building a message beats decoding one
  std::vector<std::shared_ptr<const EncodedIdentity>> identities_;
  v1::RecordBatch extras_;
};

// Some of a batch's records (kept: indexes, in order; null: every one) with a sink's own seq,
// counters and losses (extras: a v1.RecordBatch without records). Both must outlive the share.
class BatchShare {
 public:
  BatchShare(const WireBatch& batch, const v1::RecordBatch& extras,
             const std::vector<uint32_t>* kept = nullptr)
      : batch_(&batch), extras_(&extras), kept_(kept) {}

  const WireBatch& batch() const { return *batch_; }
  const v1::RecordBatch& extras() const { return *extras_; }
  const std::vector<uint32_t>* kept() const { return kept_; }
  size_t size() const { return kept_ ? kept_->size() : batch_->size(); }
  // The i-th record of the share: its index in the batch, its entry.
  uint32_t index(size_t i) const { return kept_ ? (*kept_)[i] : static_cast<uint32_t>(i); }
  const WireBatch::Entry& entry(size_t i) const { return batch_->entry(index(i)); }

  // The share's v1.RecordBatch wire form: its length, and the bytes appended to out.
  size_t WireSize() const;
  void AppendTo(std::string* out) const;
  // The share as a message (an Agent.Record caller, tests): built from the records as BPF gave
  // them, or decoded from their wire form (a batch made FromMessage).
  v1::RecordBatch ToMessage() const;
  // The same on an arena (a live summary, every interval): no allocation per record. Valid as
  // long as the arena.
  const v1::RecordBatch& ToMessage(google::protobuf::Arena* arena) const;

 private:
  const WireBatch* batch_;
  const v1::RecordBatch* extras_;
  const std::vector<uint32_t>* kept_;

  void DecodeInto(v1::RecordBatch* message) const;
};

}  // namespace ntprof::agent
