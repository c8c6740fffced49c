// A test PKI made with the openssl command line: a CA, a server certificate for localhost and
// 127.0.0.1, a client certificate that CA signed (CN host1), and a self-signed one it did not.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "temp_dir.h"

namespace ntprof::testing {

// Writes ca.pem, server.pem, server.key, client.pem, client.key, rogue.pem and rogue.key into dir.
inline void MakeTestCertificates(const TempDir& dir) {
  const std::string script = R"SH(
set -e
cd ")SH" + dir.path().string() +
                             R"SH("
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null; }
key ca.key; key server.key; key client.key; key rogue.key
openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=ntprof-test-ca
openssl req -new -key server.key -out server.csr -subj /CN=localhost
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile san.ext 2>/dev/null
openssl req -new -key client.key -out client.csr -subj /CN=host1
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 2>/dev/null
openssl req -x509 -new -key rogue.key -out rogue.pem -days 2 -subj /CN=rogue
)SH";
  std::ofstream(dir.File("make-certs.sh")) << script;
  REQUIRE(std::system(("bash " + dir.File("make-certs.sh")).c_str()) == 0);
  REQUIRE(std::filesystem::exists(dir.File("client.pem")));
}

}  // namespace ntprof::testing
