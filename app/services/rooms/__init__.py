"""Rooms and races (contract v2, "Rooms and races"), and their events.

views.py holds what the web is handed (a room, its codes, the limits); reads.py the event table
and the lists; rooms.py the use cases; events.py the event rows written inside the transaction
that caused them; feed.py a room's events as one ordered feed for the live streams.
"""
