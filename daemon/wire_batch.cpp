#include "wire_batch.h"

#include <algorithm>

#include "wire_format.h"

namespace ntprof::agent {
namespace {

using B = v1::RecordBatch;

// The raw_layout field: tag and a one-byte varint.
constexpr size_t kLayoutFieldBytes = 2;
static_assert(NTPROF_RECORD_LAYOUT < 128 && B::kRawLayoutFieldNumber < 16);

}  // namespace

void WireBatch::Add(const ntprof_record& rec,
                    const std::shared_ptr<const EncodedIdentity>& identity) {
  // Records of a batch nearly always share the last record's identity; when not, the batch's few
  // identities are searched, so records that alternate between namespaces add none. Their count
  // stays far below pad's 65,536: a batch holds at most a ring buffer's worth of records past
  // kMaxBatchRecords (about 32,000).
  if (identities_.empty() || identities_[last_identity_] != identity) {
    auto it = std::find(identities_.begin(), identities_.end(), identity);
    if (it == identities_.end()) it = identities_.insert(it, identity);
    last_identity_ = static_cast<uint16_t>(it - identities_.begin());
  }
  raw_.push_back(rec);
  raw_.back().pad = last_identity_;
}

WireBatch WireBatch::FromMessage(const v1::RecordBatch& message) {
  WireBatch b;
  b.extras_ = message;
  b.extras_.clear_records();
  for (const v1::Record& r : message.records()) {
    RecordIdentity id{r.subsys_nqn(), r.cntlid(), r.device()};
    b.Add(RawFromRecord(r), EncodeIdentity(id, r.agent()));
  }
  return b;
}

void WireBatch::Clear() {
  raw_.clear();
  identities_.clear();
  extras_.Clear();
}

size_t BatchShare::WireSize() const {
  size_t size = extras_->ByteSizeLong();
  if (this->size() == 0) return size;
  size += LengthDelimitedSize(B::kRawRecordsFieldNumber, this->size() * sizeof(ntprof_record));
  for (size_t i = 0; i < batch_->identity_count(); ++i)
    size += batch_->encoded_identity(i).field.size();
  return size + kLayoutFieldBytes;
}

void BatchShare::AppendTo(std::string* out) const {
  extras_->AppendToString(out);  // a parser merges the fields that follow into it
  if (size() == 0) return;
  AppendLengthDelimitedHead(B::kRawRecordsFieldNumber, size() * sizeof(ntprof_record), out);
  out->reserve(out->size() + size() * sizeof(ntprof_record) + 256);
  // A record at a time: a resize first would zero the whole span before the copies overwrite it
  // (one instruction a byte where rep stosb is counted, as under valgrind and TCG), and one copy
  // of the whole batch is a rep movsb too.
  for (size_t i = 0; i < size(); ++i)
    out->append(reinterpret_cast<const char*>(&raw(i)), sizeof(ntprof_record));
  // Every identity of the batch (a share names some of them; they are few).
  for (size_t i = 0; i < batch_->identity_count(); ++i) out->append(batch_->encoded_identity(i).field);
  out->push_back(static_cast<char>(B::kRawLayoutFieldNumber << 3));  // varint
  out->push_back(static_cast<char>(NTPROF_RECORD_LAYOUT));
}

v1::RecordBatch BatchShare::ToMessage() const {
  v1::RecordBatch message;
  ConvertInto(&message);
  return message;
}

const v1::RecordBatch& BatchShare::ToMessage(google::protobuf::Arena* arena) const {
  auto* message = google::protobuf::Arena::CreateMessage<v1::RecordBatch>(arena);
  ConvertInto(message);
  return *message;
}

void BatchShare::ConvertInto(v1::RecordBatch* message) const {
  *message = *extras_;
  message->mutable_records()->Reserve(static_cast<int>(size()));
  for (size_t i = 0; i < size(); ++i)
    ConvertRecord(raw(i), batch_->encoded_identity(raw(i)), message->add_records());
}

}  // namespace ntprof::agent
