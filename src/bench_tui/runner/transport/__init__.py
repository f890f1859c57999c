"""How bytes reach the measuring process: the streaming client, the SSE reader, the loop-lag monitor and
the load backends that share a point's streams."""
