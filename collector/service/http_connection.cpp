#include "http_connection.h"

#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace ntprof::collector {
namespace {

// What Finish() discards at most before closing anyway (a client that keeps sending is not
// owed a clean close).
constexpr size_t kMaxDrainBytes = 1 << 20;
constexpr std::chrono::seconds kMaxDrainTime{2};

bool Retryable(int err) { return err == EINTR || err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace

HttpConnection::~HttpConnection() {
  if (ssl_) SSL_free(ssl_);
}

int HttpConnection::Read(char* buf, int size) {
  if (ssl_) return SSL_read(ssl_, buf, size);
  ssize_t n;
  do {
    n = recv(fd_, buf, static_cast<size_t>(size), 0);
  } while (n < 0 && errno == EINTR);
  return static_cast<int>(n);
}

HttpConnection::HeadResult HttpConnection::ReadHead(std::string* head) {
  head->clear();
  char buf[1024];
  while (head->size() <= kMaxHeadBytes) {
    const int n = Read(buf, sizeof(buf));
    if (n <= 0) return HeadResult::kIncomplete;
    // Look again only where the new bytes could complete "\r\n\r\n".
    const size_t from = head->size() < 3 ? 0 : head->size() - 3;
    head->append(buf, static_cast<size_t>(n));
    const size_t end = head->find("\r\n\r\n", from);
    if (end != std::string::npos) {
      if (end + 4 > kMaxHeadBytes) return HeadResult::kTooLarge;
      head->resize(end + 4);
      return HeadResult::kComplete;
    }
  }
  return HeadResult::kTooLarge;
}

bool HttpConnection::WriteAll(std::string_view data,
                              std::chrono::steady_clock::time_point deadline) {
  size_t done = 0;
  while (done < data.size()) {
    const size_t left = data.size() - done;
    int n;
    bool retry;
    if (ssl_) {
      // A send timeout or EINTR reaches here as WANT_WRITE; SSL_write must then be called
      // again with the same buffer.
      n = SSL_write(ssl_, data.data() + done, static_cast<int>(left));
      const int err = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, n);
      retry = err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ;
    } else {
      n = static_cast<int>(send(fd_, data.data() + done, left, MSG_NOSIGNAL));
      retry = n < 0 && Retryable(errno);
    }
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (!retry || std::chrono::steady_clock::now() >= deadline) {
      return false;  // the send timeout (SO_SNDTIMEO) bounds each wait before the deadline check
    }
  }
  return true;
}

void HttpConnection::Finish() {
  if (ssl_) SSL_shutdown(ssl_);  // close_notify; the client's own is not awaited
  shutdown(fd_, SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + kMaxDrainTime;
  char buf[4096];
  size_t drained = 0;
  while (drained < kMaxDrainBytes && std::chrono::steady_clock::now() < deadline) {
    // Raw bytes: after close_notify the TLS layer has nothing more to say to this client.
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno != EINTR)) return;
    if (n > 0) drained += static_cast<size_t>(n);
  }
}

}  // namespace ntprof::collector
