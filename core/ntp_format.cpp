#include "ntp_format.h"

#include <zlib.h>

namespace ntprof::ntp {

uint32_t Crc32(std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

}  // namespace ntprof::ntp
