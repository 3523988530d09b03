"""Session histories for replay and the stores that keep them (in memory, SQLite).

Public home: :mod:`acpio.store`.
"""
