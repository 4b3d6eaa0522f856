#!/usr/bin/env bash
# The gettext catalogs (docs/languages.md): `scripts/catalogs.sh extract` rewrites
# app/locale/messages.pot from the sources; `scripts/catalogs.sh update` also merges it into
# each language's .po (new messages come in untranslated, changed ones fuzzy: translate them).
# Nothing compiled is kept: the app compiles the .po files in memory when it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYWORDS=(
  -k N_ -k Nn_:1,2 -k say -k say_n:1,2 -k _rule:3
  # The services' refusals: the message is the exception's first argument.
  -k NotFound -k Forbidden -k InvalidRequest -k NameTaken -k BadCredentials -k RoomClosed
  -k RoomFull -k NotAMember -k RaceRunning -k GameOver -k UndoUnavailable -k NothingToFinish
  -k RaceNotStarted -k Banned -k Unauthenticated -k GameInPlay -k InvalidMove -k StaleVersion
  -k HintsOffInRaces -k TooManyRooms -k NoCertifiedDeals -k NoCertifiedDealsLeft -k NoSlip
  -k Unavailable -k DealSealed -k ProofRequired -k ProofInvalid -k ProofExpired -k ProofUsed
  -k ServiceError -k IllegalMoveError -k Forbidden -k RaceInPlay -k IdempotencyKeyReused
)
extract() {
  .venv/bin/pybabel extract -F babel.cfg "${KEYWORDS[@]}" --no-location --sort-output \
    --omit-header --no-wrap -o app/locale/messages.pot . >/dev/null 2>&1
}
case "${1:-extract}" in
  extract) extract ;;
  update)
    extract
    for lang in de fr es; do
      .venv/bin/pybabel update -i app/locale/messages.pot -d app/locale -l "$lang" \
        --no-wrap --omit-header --ignore-obsolete >/dev/null
    done ;;
  *) echo "usage: $0 [extract|update]" >&2; exit 2 ;;
esac
