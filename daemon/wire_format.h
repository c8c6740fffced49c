// The few pieces of protobuf's wire format the agent writes by hand: length-delimited fields (an
// embedded message's or a string's), for identities encoded once (record_converter.h), a batch's
// raw records and the messages built around their bytes (wire_batch.h, the spool's AgentMessage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ntprof::agent {

inline constexpr uint32_t kLengthDelimited = 2;  // the wire type

// Appends a length-delimited field's tag and length: the head of `size` bytes the caller appends
// next.
void AppendLengthDelimitedHead(uint32_t field, size_t size, std::string* out);
// Appends the whole field: head and bytes.
void AppendLengthDelimited(uint32_t field, std::string_view bytes, std::string* out);
// The bytes such a field takes, with its head.
size_t LengthDelimitedSize(uint32_t field, size_t size);

}  // namespace ntprof::agent
