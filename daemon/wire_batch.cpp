#include "wire_batch.h"

#include <span>

#include "stage_model.h"
#include "wire_format.h"

namespace ntprof::agent {
namespace {

constexpr uint32_t kRecordsField = v1::RecordBatch::kRecordsFieldNumber;

}  // namespace

void WireBatch::Add(const ntprof_record& rec,
                    const std::shared_ptr<const EncodedIdentity>& identity) {
  // Records of a batch nearly always share one identity: compare with the last one only.
  if (identities_.empty() || identities_.back() != identity) identities_.push_back(identity);
  Entry e;
  e.offset = static_cast<uint32_t>(records_.size());
  EncodeRecord(rec, *identities_.back(), &records_);
  e.length = static_cast<uint32_t>(records_.size()) - e.offset;
  e.identity = static_cast<uint32_t>(identities_.size() - 1);
  e.opcode = rec.opcode;
  e.cid = rec.cid;
  e.nsid = rec.nsid;
  e.nlb = rec.nlb;
  e.slba = rec.slba;
  // __u64 is unsigned long long, uint64_t unsigned long: the same 64 bits
  static_assert(sizeof(rec.stamps[0]) == sizeof(uint64_t));
  e.earliest_stamp = EarliestStamp(std::span<const uint64_t>(
      reinterpret_cast<const uint64_t*>(rec.stamps), static_cast<size_t>(StampCount(rec.role))));
  entries_.push_back(e);
  if (keep_raw_) raw_.push_back(rec);
}

WireBatch WireBatch::FromMessage(const v1::RecordBatch& message) {
  WireBatch b;
  b.extras_ = message;
  b.extras_.clear_records();
  for (const v1::Record& r : message.records()) {
    RecordIdentity id{r.subsys_nqn(), r.cntlid(), r.device()};
    auto identity = std::make_shared<EncodedIdentity>();
    identity->identity = id;
    b.identities_.push_back(std::move(identity));
    Entry e;
    e.offset = static_cast<uint32_t>(b.records_.size());
    r.AppendToString(&b.records_);
    e.length = static_cast<uint32_t>(b.records_.size()) - e.offset;
    e.identity = static_cast<uint32_t>(b.identities_.size() - 1);
    e.opcode = static_cast<uint8_t>(r.opcode());
    e.cid = static_cast<uint16_t>(r.cid());
    e.nsid = r.nsid();
    e.nlb = r.nlb();
    e.slba = r.slba();
    e.earliest_stamp = EarliestStamp(r);
    b.entries_.push_back(e);
  }
  return b;
}

void WireBatch::Clear() {
  records_.clear();
  entries_.clear();
  raw_.clear();
  identities_.clear();
  extras_.Clear();
}

size_t BatchShare::WireSize() const {
  size_t size = extras_->ByteSizeLong();
  for (size_t i = 0; i < this->size(); ++i)
    size += LengthDelimitedSize(kRecordsField, entry(i).length);
  return size;
}

void BatchShare::AppendTo(std::string* out) const {
  extras_->AppendToString(out);  // a parser merges the records that follow into it
  for (size_t i = 0; i < size(); ++i)
    AppendLengthDelimited(kRecordsField, batch_->bytes(entry(i)), out);
}

v1::RecordBatch BatchShare::ToMessage() const {
  v1::RecordBatch message;
  DecodeInto(&message);
  return message;
}

const v1::RecordBatch& BatchShare::ToMessage(google::protobuf::Arena* arena) const {
  auto* message = google::protobuf::Arena::CreateMessage<v1::RecordBatch>(arena);
  DecodeInto(message);
  return *message;
}

void BatchShare::DecodeInto(v1::RecordBatch* message) const {
  if (size() == 0 || batch_->raw(index(0)) != nullptr) {
    *message = *extras_;
    message->mutable_records()->Reserve(static_cast<int>(size()));
    for (size_t i = 0; i < size(); ++i) {
      ConvertRecord(*batch_->raw(index(i)), batch_->encoded_identity(entry(i)),
                    message->add_records());
    }
    return;
  }
  // One parse of the whole batch: a parse per record cost twice as much.
  std::string bytes;
  bytes.reserve(WireSize());
  AppendTo(&bytes);
  message->ParseFromString(bytes);
}

}  // namespace ntprof::agent
