// `eagle serve`: owns the store (its write lock) and answers HTTP/JSON until SIGINT or
// SIGTERM (docs/http-api.md). The socket is bound first, so /health and /ready answer
// while the collections, registry and plugin load; /ready turns 200 when they have.
#include <signal.h>

#include <cstdio>
#include <memory>
#include <thread>

#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/server/http_server.h"

namespace eagle::app {
namespace {

struct ServeFlags {
  std::string host;
  int port = -1;
  size_t threads = 0;
  std::string ingest_root;
  std::string plugin_namespace;
};

int serve(const GlobalFlags& g, const ServeFlags& f) {
  auto cfg = resolve_config(g);
  if (!f.host.empty()) cfg.server.host = f.host;
  if (f.port >= 0) cfg.server.port = f.port;
  if (f.threads) cfg.server.threads = f.threads;
  if (!f.ingest_root.empty()) cfg.server.ingest_root = f.ingest_root;
  if (!f.plugin_namespace.empty()) cfg.pipeline.plugin_namespace = f.plugin_namespace;
  // Tokens and the loopback rule are checked before the store is touched.
  auto opts = server::server_options(cfg);
  const std::string where = cfg.server.host + ":" + std::to_string(cfg.server.port);
  Engine engine(cfg, StoreAccess::write, "eagle serve on " + where);

  // SIGINT/SIGTERM are taken by this thread (sigwait), never by the workers.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  server::Server server(engine, opts);
  const int port = server.bind();
  std::printf("eagle: serving %s on http://%s:%d (%zu threads%s)\n", cfg.data_dir.c_str(), opts.host.c_str(), port,
              opts.threads, opts.tokens.empty() ? ", no auth" : ", bearer tokens");
  std::fflush(stdout);
  std::thread listener([&] { server.run(); });
  try {
    engine.preload(cfg.pipeline.plugin_namespace);
  } catch (...) {
    server.stop();
    listener.join();
    throw;
  }
  server.set_ready(true);
  const std::string& ns = cfg.pipeline.plugin_namespace;
  const std::string resolved = engine.resolve_namespace(ns);
  std::printf("eagle: ready (%zu collections, namespace %s%s)\n", engine.catalog().list().size(), resolved.c_str(),
              ns == "auto" ? (", auto: " + auto_reason(resolved)).c_str() : "");
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::printf("eagle: stopping (signal %d)\n", sig);
  std::fflush(stdout);
  server.stop();
  listener.join();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto f = std::make_shared<ServeFlags>();
  auto* serve_cmd = app.add_subcommand("serve", "answer HTTP/JSON (search, ingest tasks, documents, metrics) on one warm process "
                                                "that owns the store; see docs/http-api.md");
  serve_cmd->add_option("--host", f->host, "address to bind (server.host; default 127.0.0.1)");
  serve_cmd->add_option("--port", f->port, "TCP port (server.port; default 8686; 0 = any free port)");
  serve_cmd->add_option("--threads", f->threads, "worker threads (server.threads)");
  serve_cmd->add_option("--ingest-root", f->ingest_root, "folder POST /ingest {\"path\"} may read (server.ingest_root)");
  serve_cmd->add_option("--namespace", f->plugin_namespace,
                        "default plugin namespace, loaded at start (pipeline.namespace: core, biomed or auto)");
  out.push_back({serve_cmd, [&g, f] { return serve(g, *f); }});
}

}  // namespace eagle::app
