// A recording's batch in wire form, and the share of it one sink gets.
//
// WireBatch holds each record as BPF gave it, with the index of its identity in `pad`
// (RecordBatch.raw_records, core/raw_records.h), and the identities. A BatchShare is some or all of
// those records with the seq, device counters and losses of the sink it goes to; a sink writes it
// as the bytes of a v1.RecordBatch by copying the records and the identities' bytes, encoded once
// each. Nothing is built as a message, encoded per record, copied per session or per collector,
// or serialized again (docs/overhead.md, "The agent's work per record").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/arena.h>

#include "ntprof/v1/record.pb.h"
#include "ntprof_record.h"
#include "record_converter.h"

namespace ntprof::agent {

class WireBatch {
 public:
  // Adds rec with its identity (the index of which goes into the copy's `pad`).
  void Add(const ntprof_record& rec, const std::shared_ptr<const EncodedIdentity>& identity);
  // A batch that already is a message (tests, tools): its records are taken back to their raw
  // form (core/raw_records.h: RawFromRecord), its seq, counters and losses become the extras.
  static WireBatch FromMessage(const v1::RecordBatch& message);

  size_t size() const { return raw_.size(); }
  // The i-th record as BPF gave it, its identity's index in `pad`. What sessions and collectors
  // route by (the sampling fields, the stamps, the identity) is read from it where they need it:
  // nothing is worked out per record that a sink may not ask for.
  const ntprof_record& raw(size_t i) const { return raw_[i]; }
  const RecordIdentity& identity(const ntprof_record& r) const {
    return identities_[r.pad]->identity;
  }
  const EncodedIdentity& encoded_identity(const ntprof_record& r) const {
    return *identities_[r.pad];
  }
  size_t identity_count() const { return identities_.size(); }
  const EncodedIdentity& encoded_identity(size_t i) const { return *identities_[i]; }
  // The batch's seq, device counters and losses: a v1.RecordBatch without records.
  v1::RecordBatch& extras() { return extras_; }
  const v1::RecordBatch& extras() const { return extras_; }
  // Room for `records` records without a reallocation.
  void Reserve(size_t records) { raw_.reserve(records); }
  // Empties it for the next batch; the buffers keep their capacity.
  void Clear();

 private:
  std::vector<ntprof_record> raw_;
  std::vector<std::shared_ptr<const EncodedIdentity>> identities_;
  uint16_t last_identity_ = 0;  // the last record's, an index into identities_
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
  // The i-th record of the share: its index in the batch, the record.
  uint32_t index(size_t i) const { return kept_ ? (*kept_)[i] : static_cast<uint32_t>(i); }
  const ntprof_record& raw(size_t i) const { return batch_->raw(index(i)); }

  // The share's v1.RecordBatch wire form: its length, and the bytes appended to out.
  size_t WireSize() const;
  void AppendTo(std::string* out) const;
  // The share as a message with its records converted (an Agent.Record caller, tests).
  v1::RecordBatch ToMessage() const;
  // The same on an arena (a live summary, every interval): no allocation per record. Valid as
  // long as the arena.
  const v1::RecordBatch& ToMessage(google::protobuf::Arena* arena) const;

 private:
  const WireBatch* batch_;
  const v1::RecordBatch* extras_;
  const std::vector<uint32_t>* kept_;

  void ConvertInto(v1::RecordBatch* message) const;
};

}  // namespace ntprof::agent
