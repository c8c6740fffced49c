// Records as an agent ships them: struct ntprof_record exactly as its BPF programs wrote it
// (RecordBatch.raw_records, with the identities they name), turned into ntprof.v1.Record messages
// by whoever reads them: the collector as batches arrive, NtpReader for an agent's .ntp files.
// Converting here and not in the agent takes that work off the machine being measured
// (docs/design.md, "Records on the wire").
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "ntprof/v1/record.pb.h"
#include "ntprof_record.h"

namespace ntprof {

// Number of stamps a record of this role carries (the length of Record.stamps).
int StampCount(uint8_t role);

// The message form of raw with the identity it names (its pad field is not read).
void RecordFromRaw(const ntprof_record& raw, const v1::RecordIdentity& identity, v1::Record* out);

// The raw form of a message (what an agent would have shipped for it; ctrl, dev and subsys,
// which only mean something on the agent's machine, are 0). `pad` is left 0.
ntprof_record RawFromRecord(const v1::Record& record);

// Appends batch's raw records to its records, in order, and clears the raw fields. Fails, and
// leaves the batch as it was, when they cannot be read: a layout this build does not know (an
// agent newer than the reader), a length that is no whole number of records, or an identity
// index out of range.
absl::Status ExpandRawRecords(v1::RecordBatch* batch);

}  // namespace ntprof
