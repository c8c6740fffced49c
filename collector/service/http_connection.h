// One HTTP/1.0 exchange on an accepted socket, plaintext or TLS: read the request head (bounded),
// write the whole response, close so that the client receives every byte of it.
//
// Closing a socket whose receive queue still holds unread bytes makes the kernel send a reset and
// drop whatever response is not yet delivered, so a client that sent more than was read (an
// oversized header, a request body) would see a truncated response. Finish() therefore sends FIN
// first and then reads and discards what the client still sends, within bounds.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

typedef struct ssl_st SSL;

namespace ntprof::collector {

class HttpConnection {
 public:
  // Bigger request heads are answered 431; a Prometheus scrape sends a few hundred bytes.
  static constexpr size_t kMaxHeadBytes = 8192;

  enum class HeadResult {
    kComplete,    // the head, up to and including its blank line
    kTooLarge,    // no blank line within kMaxHeadBytes
    kIncomplete,  // the client closed or stalled before the blank line
  };

  // ssl: an accepted TLS session on fd (owned from here on), or null for plaintext.
  HttpConnection(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  HeadResult ReadHead(std::string* head);
  // Every byte, across partial writes and send timeouts, until `deadline`. False if the client
  // went away or the deadline passed.
  bool WriteAll(std::string_view data, std::chrono::steady_clock::time_point deadline);
  // TLS close_notify, FIN, then discard the client's remaining input until it closes (bounded in
  // bytes and time). The caller closes fd afterwards.
  void Finish();

 private:
  int Read(char* buf, int size);

  int fd_;
  SSL* ssl_;
};

}  // namespace ntprof::collector
