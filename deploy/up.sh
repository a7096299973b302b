#!/bin/sh
# The whole Compose set-up in one command, from anywhere: deploy/up.sh [more `docker compose up` arguments]
# The first time, it writes deploy/.env from deploy/.env.example with a new random token for each
# secret (printed once, kept only in that file); later it keeps deploy/.env as it is. Then it runs
# `docker compose up -d` in deploy/ (docker-compose 1.29 when there is no Compose v2).
set -eu
cd "$(dirname "$0")"

random() {
  if command -v openssl >/dev/null 2>&1; then
    openssl rand -hex "$1"
  else
    od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'
  fi
}

if [ ! -f .env ]; then
  umask 077
  api="$(random 32)"
  read="$(random 32)"
  grafana="$(random 16)"
  sed -e "s/^TASKLINE_API_TOKEN=\$/TASKLINE_API_TOKEN=$api/" \
      -e "s/^TASKLINE_READ_TOKEN=\$/TASKLINE_READ_TOKEN=$read/" \
      -e "s/^GRAFANA_ADMIN_PASSWORD=\$/GRAFANA_ADMIN_PASSWORD=$grafana/" .env.example > .env
  echo "up.sh: wrote deploy/.env with new secrets (keep it; it is not under version control):"
  echo "  dashboard and API token (admin): $api"
  echo "  Grafana: admin / $grafana"
fi

if docker compose version >/dev/null 2>&1; then
  exec docker compose up -d "$@"
elif command -v docker-compose >/dev/null 2>&1; then
  exec docker-compose up -d "$@"
else
  echo "up.sh: Docker Compose is not installed (docker compose or docker-compose)" >&2
  exit 1
fi
