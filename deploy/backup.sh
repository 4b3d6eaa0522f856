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

# Every line this service writes is one JSON object (docs/operating.md, "Logs"): pg_dump's own
# complaints go into the "error" field of the failure's line.
json_text() {
  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/ /g' | tr '\n\r' '  '
}

dump() {
  stamp=$(date -u +%Y%m%dT%H%M%SZ)-$$-$(od -An -N2 -tx2 /dev/urandom | tr -d " ")
  part="$dir/.patience-hall-$stamp.dump.part"
  if ! pg_dump --format=custom --no-owner --file="$part" 2>"$part.err"; then
    echo "{\"level\":\"error\",\"msg\":\"backup failed\",\"error\":\"$(json_text <"$part.err")\"}"
    rm -f "$part" "$part.err"
    return 1
  fi
  rm -f "$part.err"
  mv "$part" "$dir/patience-hall-$stamp.dump"
  echo "{\"level\":\"info\",\"msg\":\"backup written\",\"file\":\"patience-hall-$stamp.dump\"}"
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
  dump || true  # said above; the next one is tried at the next interval
  sleep "$interval"
done
