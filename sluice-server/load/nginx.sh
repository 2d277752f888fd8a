# Sourced by the load scripts: nginx answering `return 200` to every request on the loopback, the ceiling for an
# HTTP/1.1 answer on this machine (and, on the next port, for a cleartext HTTP/2 one), as a daemon whose files
# (configuration, pid, logs) live in a work directory.
#
#   start_nginx DIR PORT   writes DIR/nginx.conf and starts nginx on 127.0.0.1:PORT (HTTP/1.1) and PORT+1 (h2c)
#   stop_nginx DIR         stops it if it runs (safe to call twice, e.g. again from an EXIT trap)

start_nginx() { # dir port
  cat >"$1/nginx.conf" <<EOF_CONF
worker_processes 1;
daemon on;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $1;
  server {
    listen 127.0.0.1:$2;
    keepalive_requests 100000000;
    location / { default_type application/json; return 200 '{"overallCode":"OK"}'; }
  }
  server {
    listen 127.0.0.1:$(($2 + 1)) http2;
    keepalive_requests 100000000;
    location / { default_type application/json; return 200 '{"overallCode":"OK"}'; }
  }
}
EOF_CONF
  nginx -c "$1/nginx.conf"
}

stop_nginx() { # dir
  if [ -f "$1/nginx.pid" ]; then
    kill "$(cat "$1/nginx.pid")" 2>/dev/null || true
    rm -f "$1/nginx.pid"
  fi
}
