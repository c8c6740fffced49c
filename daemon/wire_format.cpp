#include "wire_format.h"

#include <google/protobuf/io/coded_stream.h>

namespace ntprof::agent {

using google::protobuf::io::CodedOutputStream;

void AppendLengthDelimitedHead(uint32_t field, size_t size, std::string* out) {
  uint8_t head[2 * 5];
  uint8_t* p = CodedOutputStream::WriteTagToArray(field << 3 | kLengthDelimited, head);
  p = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), p);
  out->append(reinterpret_cast<const char*>(head), p - head);
}

void AppendLengthDelimited(uint32_t field, std::string_view bytes, std::string* out) {
  AppendLengthDelimitedHead(field, bytes.size(), out);
  out->append(bytes);
}

size_t LengthDelimitedSize(uint32_t field, size_t size) {
  return CodedOutputStream::VarintSize32(field << 3 | kLengthDelimited) +
         CodedOutputStream::VarintSize32(static_cast<uint32_t>(size)) + size;
}

}  // namespace ntprof::agent
