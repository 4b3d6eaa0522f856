#!/bin/sh
# docker-compose.yml's "backup" service: a pg_dump of the database every BACKUP_INTERVAL_S
# seconds (default a day) into BACKUP_DIR (default /backups), keeping the BACKUP_KEEP newest
# (default 14). BACKUP_ONCE=1 takes one dump and stops (a cron job on the host can do that).
# The connection comes from libpq's variables: PGHOST, PGUSER, PGPASSWORD, PGDATABASE.
#
# A dump alone cannot be restored to a working site: keep the DEAL_KEY with it (stored games
# are dealt with that key; docs/operating.md, "Backup and restore").
set -eu
dir=${BACKUP_DIR:-/backups}
interval=${BACKUP_INTERVAL_S:-86400}
keep=${BACKUP_KEEP:-14}
mkdir -p "$dir"

dump() {
  stamp=$(date -u +%Y%m%dT%H%M%SZ)-$$-$(od -An -N2 -tx2 /dev/urandom | tr -d " ")
  part="$dir/.patience-hall-$stamp.dump.part"
  pg_dump --format=custom --no-owner --file="$part"
  mv "$part" "$dir/patience-hall-$stamp.dump"
  echo "{\"msg\":\"backup written\",\"file\":\"patience-hall-$stamp.dump\"}"
  # The newest $keep dumps stay.
  ls -1t "$dir"/patience-hall-*.dump 2>/dev/null | tail -n +"$((keep + 1))" | while read -r old; do
    rm -f "$old"
  done
}

if [ "${BACKUP_ONCE:-0}" = 1 ]; then
  dump
  exit 0
fi
while true; do
  dump || echo "{\"msg\":\"backup failed\",\"level\":\"error\"}"
  sleep "$interval"
done
