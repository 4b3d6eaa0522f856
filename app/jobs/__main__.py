"""``python -m app.jobs [--one-shot]``: a solver worker (docker-compose.yml's ``worker``)."""

from app.jobs import main

main()
