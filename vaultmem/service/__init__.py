"""The warm process: the watcher, its socket server and the light client."""
