#include "eagle/server/http_listener.h"

#include <future>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

namespace eagle::server {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

using Parser = bhttp::request_parser<bhttp::string_body>;

// Bytes a client may still send after a refusal that are read and dropped before the
// close (a close with unread bytes makes the kernel send a reset, which can destroy the
// answer before the client reads it: curl uploading a body past the limit saw no 413),
// and how long that may take. A client sees the answer and stops; one that sends on is
// cut at either bound. The drain reuses one small buffer: it costs time, not memory.
constexpr size_t kLingerBytes = 16 << 20;
constexpr auto kLingerTime = std::chrono::seconds(2);
// The read buffer's ceiling beyond the header limit: Beast's header limit does not
// cover a chunk-size line, the buffer's does.
constexpr size_t kReadSlack = 64 * 1024;
// A request target longer than this is 414: route matching (std::regex) recurses per
// character, and no route needs more.
constexpr size_t kMaxTargetBytes = 8192;

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

HttpResponse error_response(int status, const std::string& code, const std::string& message) {
  HttpResponse res;
  res.status = status;
  nlohmann::json body = {{"error", {{"code", code}, {"message", message}}}};
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
  return res;
}

// What a read error says to the client: a status for a request that could not be read
// (400, 413, 431), nothing for a connection that ended or timed out (it is closed).
std::optional<HttpResponse> read_error_response(const beast::error_code& ec, const ListenerLimits& limits) {
  if (ec == bhttp::error::body_limit)
    return error_response(413, "too_large",
                          "the body is larger than server.max_body_bytes (" + std::to_string(limits.max_body_bytes) + ")");
  if (ec == bhttp::error::header_limit)
    return error_response(431, "too_large",
                          "the request line and headers are larger than " + std::to_string(limits.max_header_bytes) +
                              " bytes");
  if (ec == bhttp::error::buffer_overflow)
    return error_response(400, "invalid_argument", "a chunk-size line or trailer of the body is too long");
  if (ec.category() == bhttp::make_error_code(bhttp::error::end_of_stream).category() &&
      ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message && ec != bhttp::error::need_more)
    return error_response(400, "invalid_argument", "the request could not be read (" + ec.message() + ")");
  return std::nullopt;
}

// The request as handlers see it, from a parsed header. False: the target is malformed.
bool read_head(const Parser::value_type& msg, HttpRequest& req) {
  req = HttpRequest{};
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  for (const auto& f : msg) req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  return parse_target(req.target, req);
}

// What the listener refuses on a parsed head, before the screen: a target too long to
// route (414) or not a path (400), and a Transfer-Encoding whose last coding is not
// chunked (RFC 9112 §6.3: Beast 1.74 would read no body and take the body's bytes for
// the next request, a smuggling desync behind a proxy that frames it otherwise).
std::optional<HttpResponse> head_refusal(const Parser& parser, HttpRequest& req) {
  const auto& msg = parser.get();
  if (msg.target().size() > kMaxTargetBytes)
    return error_response(414, "too_large", "the request target is longer than " + std::to_string(kMaxTargetBytes) +
                                                " bytes");
  if (!read_head(msg, req))
    return error_response(400, "invalid_argument", "the request target is not a well-formed path");
  if (msg.count(bhttp::field::transfer_encoding) > 0 && !parser.chunked())
    return error_response(400, "invalid_argument",
                          "a Transfer-Encoding must end with chunked (or send a Content-Length instead)");
  return std::nullopt;
}

// The screen, whose failure must not reach the I/O loop: an exception is a 500.
bool run_screen(const HttpHandlers& h, const HttpRequest& req, HttpResponse& res) {
  try {
    return h.screen(req, res);
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", req.method, req.path, e.what());
    res = error_response(500, "internal", "internal error");
    return false;
  }
}

void count_refusal(const HttpHandlers& h, const HttpRequest& req, const HttpResponse& res) {
  if (h.refused) h.refused(req, res);
}

void new_parser(std::optional<Parser>& parser, const ListenerLimits& limits) {
  parser.emplace();
  parser->header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
  // Before the header: Beast checks a Content-Length against it when the header ends.
  parser->body_limit(limits.max_body_bytes);
}

bool expects_continue(const HttpRequest& req) { return iequals(req.get_header_value("Expect"), "100-continue"); }

}  // namespace

struct HttpListener::Impl {
  // Declared before the io_context so they outlive it: destroying it destroys the
  // connections still queued on it, and each one's destructor counts itself out.
  ListenerLimits limits;
  HttpHandlers handlers;
  std::atomic<size_t> connections{0};
  std::atomic<size_t> pending{0};
  std::atomic<bool> stopped{false};
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  net::steady_timer accept_retry{ioc};
  net::thread_pool workers;

  Impl(ListenerLimits l, HttpHandlers h)
      : limits(l), handlers(std::move(h)), ioc(static_cast<int>(std::max<size_t>(1, l.io_threads))),
        workers(std::max<size_t>(1, l.workers)) {}

  void accept();
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, HttpListener::Impl& owner)
      : stream_(std::move(socket)), owner_(owner), buffer_(owner.limits.max_header_bytes + kReadSlack) {}
  ~Session() { --owner_.connections; }

  void start() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::read_header, shared_from_this()));
  }

 private:
  const ListenerLimits& limits() const { return owner_.limits; }

  void read_header() {
    new_parser(parser_, limits());
    request_ = HttpRequest{};
    head_only_ = false;
    stream_.expires_after(seconds(limits().header_timeout_s));
    // Beast bounds the headers: after a first read that leaves them incomplete it parses
    // no further field until their end has arrived, and refuses once the waiting bytes
    // pass header_limit (HeaderLinesTrickledWithoutEndAreCutAtTheHeaderLimit).
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               if (ec) return self->refuse_or_close(ec);
                               self->on_header();
                             });
  }

  void on_header() {
    if (auto refusal = head_refusal(*parser_, request_)) {
      count_refusal(owner_.handlers, request_, *refusal);
      return send(std::move(*refusal), true);
    }
    head_only_ = request_.method == "HEAD";
    http10_ = parser_->get().version() < 11;
    HttpResponse refusal;
    if (!run_screen(owner_.handlers, request_, refusal)) return send(std::move(refusal), true);
    if (expects_continue(request_) && !parser_->is_done()) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      stream_.expires_after(seconds(limits().body_timeout_s));
      net::async_write(stream_, net::buffer(kContinue), [self = shared_from_this()](beast::error_code wec, size_t) {
        if (wec) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    stream_.expires_after(seconds(limits().body_timeout_s));
    bhttp::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&Session::on_body, shared_from_this()));
  }

  void on_body(beast::error_code ec, size_t) {
    if (ec) return refuse_or_close(ec);
    stream_.expires_never();
    request_.body = std::move(parser_->get().body());
    ++served_;
    keep_alive_ = parser_->get().keep_alive() && served_ < limits().keep_alive_requests;
    // Admission: the workers' queue is bounded; a request past it is told to come back.
    if (owner_.pending.fetch_add(1) >= limits().max_pending) {
      --owner_.pending;
      HttpResponse res = error_response(503, "unavailable", "the server is busy; retry shortly");
      res.set_header("Retry-After", "1");
      count_refusal(owner_.handlers, request_, res);
      return send(std::move(res), true);
    }
    net::post(owner_.workers, [self = shared_from_this()] {
      HttpResponse res;
      try {
        self->owner_.handlers.handle(self->request_, res);
      } catch (const std::exception& e) {
        spdlog::error("{} {}: {}", self->request_.method, self->request_.path, e.what());
        res = error_response(500, "internal", "internal error");
      }
      if (res.producer && (self->http10_ || self->head_only_)) run_producer_inline(res);
      if (res.producer) {
        self->stream_response(std::move(res));
        --self->owner_.pending;
        return;
      }
      --self->owner_.pending;
      net::post(self->stream_.get_executor(), [self, res = std::move(res)]() mutable {
        const bool close = !self->keep_alive_ || iequals(res.get_header_value("Connection"), "close");
        self->send(std::move(res), close);
      });
    });
  }

  // On a worker: the headers, then each piece the producer writes as one chunk, each
  // written (on the strand) before the next is taken, then the last chunk; then the
  // connection goes on as after any answer. A piece not written within the write
  // deadline, or a client that is gone, ends the stream and the connection.
  void stream_response(HttpResponse res) {
    auto producer = std::move(res.producer);
    res.producer = nullptr;
    res.chunked = true;
    res.body.clear();
    const bool close = !keep_alive_ || iequals(res.get_header_value("Connection"), "close");
    std::string head = serialize_response(res, true, close);
    bool alive = write_blocking(std::move(head));
    if (alive) {
      try {
        producer([&](std::string_view piece) {
          if (!alive || piece.empty()) return alive;
          char size[24];
          std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
          std::string chunk = size;
          chunk.append(piece);
          chunk += "\r\n";
          alive = write_blocking(std::move(chunk));
          return alive;
        });
      } catch (const std::exception& e) {
        // The status is sent: the stream can only end (the client sees no last chunk).
        spdlog::error("{} {} (streaming): {}", request_.method, request_.path, e.what());
        alive = false;
      }
    }
    if (alive) alive = write_blocking("0\r\n\r\n");
    net::post(stream_.get_executor(), [self = shared_from_this(), alive, close] {
      self->stream_.expires_never();
      if (!alive) return self->close();
      if (close) return self->linger();
      self->read_header();
    });
  }

  // From a worker: `bytes` written on the strand; false when the write failed or did
  // not finish within the write deadline (plus a second for the strand to answer).
  bool write_blocking(std::string bytes) {
    auto done = std::make_shared<std::promise<bool>>();
    auto result = done->get_future();
    auto data = std::make_shared<std::string>(std::move(bytes));
    net::post(stream_.get_executor(), [self = shared_from_this(), data, done] {
      self->stream_.expires_after(seconds(self->limits().body_timeout_s));
      net::async_write(self->stream_, net::buffer(*data),
                       [data, done](beast::error_code ec, size_t) { done->set_value(!ec); });
    });
    const auto limit = std::chrono::duration<double>(limits().body_timeout_s + 1.0);
    if (result.wait_for(limit) != std::future_status::ready) return false;
    return result.get();
  }

  void refuse_or_close(const beast::error_code& ec) {
    auto res = read_error_response(ec, limits());
    if (!res) return close();
    count_refusal(owner_.handlers, request_, *res);
    send(std::move(*res), true);
  }

  void send(HttpResponse res, bool close_after) {
    if (http10_) res.chunked = false;  // HTTP/1.0 has no chunked coding: the length instead
    out_ = serialize_response(res, head_only_, close_after);
    close_after_ = close_after;
    stream_.expires_after(seconds(limits().body_timeout_s));
    net::async_write(stream_, net::buffer(out_), beast::bind_front_handler(&Session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, size_t) {
    out_.clear();
    if (ec) return close();
    if (close_after_) return linger();
    read_header();
  }

  // Half-close, then read and drop what the client still sends (bounded in bytes and
  // time) so the answer reaches it before the connection ends.
  void linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    linger_left_ = kLingerBytes;
    stream_.expires_after(kLingerTime);
    drain();
  }

  void drain() {
    stream_.async_read_some(net::buffer(drain_buffer_), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (ec || n >= self->linger_left_) return self->close();
      self->linger_left_ -= n;
      self->drain();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  HttpListener::Impl& owner_;
  beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  HttpRequest request_;
  std::string out_;
  bool head_only_ = false;
  bool http10_ = false;
  bool keep_alive_ = true;
  bool close_after_ = false;
  size_t served_ = 0;
  size_t linger_left_ = 0;
  std::array<char, 16 * 1024> drain_buffer_;
};

}  // namespace

void HttpListener::Impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (stopped) return;
    if (ec) {
      if (ec == net::error::operation_aborted) return;
      // Out of descriptors (EMFILE) and the like: wait instead of spinning on the error.
      spdlog::warn("accept: {}", ec.message());
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](beast::error_code) { if (!stopped) accept(); });
      return;
    }
    if (connections.fetch_add(1) >= limits.max_connections) {
      --connections;
      beast::error_code ignored;
      socket.close(ignored);
    } else {
      beast::error_code ignored;
      // Headers and body leave in one write, but a client's next request must not wait
      // on Nagle's algorithm and its delayed ACK (~40 ms a turn).
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Session>(std::move(socket), *this)->start();
    }
    accept();
  });
}

HttpListener::HttpListener(ListenerLimits limits, HttpHandlers handlers)
    : impl_(std::make_unique<Impl>(limits, std::move(handlers))) {}

HttpListener::~HttpListener() { stop(); }

int HttpListener::bind(const std::string& host, int port) {
  beast::error_code ec;
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
  tcp::resolver resolver(impl_->ioc);
  const auto found = resolver.resolve(name, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) return -1;
  const tcp::endpoint endpoint = found.begin()->endpoint();
  auto& acc = impl_->acceptor;
  acc.open(endpoint.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(endpoint, ec);
  if (!ec) acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    beast::error_code ignored;
    acc.close(ignored);
    return -1;
  }
  return acc.local_endpoint().port();
}

void HttpListener::run() {
  if (impl_->stopped) return;
  impl_->accept();
  // A handler that throws must not end the loop (nor, on another thread, the process).
  auto serve = [this] {
    for (;;) {
      try {
        impl_->ioc.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("http listener: {}", e.what());
      }
    }
  };
  std::vector<std::thread> more;
  for (size_t i = 1; i < std::max<size_t>(1, impl_->limits.io_threads); ++i) more.emplace_back(serve);
  serve();
  for (auto& t : more) t.join();
}

void HttpListener::stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  net::post(impl_->ioc, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
  });
  impl_->ioc.stop();
  // Requests running now finish; their answers are dropped with the connections.
  impl_->workers.join();
}

std::string HttpListener::answer_bytes(std::string_view bytes, const ListenerLimits& limits,
                                       const HttpHandlers& handlers, size_t max_requests, size_t max_out) {
  beast::flat_buffer buffer;
  buffer.commit(net::buffer_copy(buffer.prepare(bytes.size()), net::buffer(bytes.data(), bytes.size())));
  std::string out;
  auto emit = [&](const HttpResponse& res, bool head_only, bool close) {
    const std::string wire = serialize_response(res, head_only, close);
    out.append(wire, 0, std::min(wire.size(), max_out - std::min(max_out, out.size())));
  };
  // Feeds the parser what is buffered; false when the bytes end first (the client
  // stopped sending: a deadline would end the connection) or the request is refused.
  auto feed = [&](Parser& parser, const HttpRequest& req, bool header) {
    while (header ? !parser.is_header_done() : !parser.is_done()) {
      // The bytes ended first: a deadline would end the connection (Beast's put takes
      // an empty buffer as no progress, not as an error).
      if (buffer.size() == 0) return false;
      beast::error_code ec;
      const size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == bhttp::error::need_more || (!ec && used == 0)) {
        if (buffer.size() == 0 || used == 0) return false;
        continue;
      }
      if (ec) {
        if (auto res = read_error_response(ec, limits)) {
          count_refusal(handlers, req, *res);
          emit(*res, false, true);
        }
        return false;
      }
    }
    return true;
  };
  for (size_t i = 0; i < max_requests && buffer.size() > 0 && out.size() < max_out; ++i) {
    std::optional<Parser> parser;
    new_parser(parser, limits);
    HttpRequest req;
    if (!feed(*parser, req, true)) break;
    if (auto refusal = head_refusal(*parser, req)) {
      count_refusal(handlers, req, *refusal);
      emit(*refusal, false, true);
      break;
    }
    const bool head_only = req.method == "HEAD";
    const bool http10 = parser->get().version() < 11;
    HttpResponse refusal;
    if (!run_screen(handlers, req, refusal)) {
      emit(refusal, head_only, true);
      break;
    }
    parser->eager(true);
    if (!feed(*parser, req, false)) break;
    req.body = std::move(parser->get().body());
    const bool last = i + 1 == max_requests || !parser->get().keep_alive() || i + 1 >= limits.keep_alive_requests;
    HttpResponse res;
    try {
      handlers.handle(req, res);
      if (res.producer) {
        run_producer_inline(res);
        res.chunked = true;
      }
    } catch (const std::exception&) {
      res = error_response(500, "internal", "internal error");
    }
    if (http10) res.chunked = false;
    const bool close = last || iequals(res.get_header_value("Connection"), "close");
    emit(res, head_only, close);
    if (close) break;
  }
  return out;
}

}  // namespace eagle::server
