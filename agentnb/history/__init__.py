"""What an agent did: turn records, the history that holds them, its DataFrames, two turns
compared, and the static text/HTML renderers of all of these."""
