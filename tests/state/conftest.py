from tests.state._redis import redis_server

__all__ = ["redis_server"]
