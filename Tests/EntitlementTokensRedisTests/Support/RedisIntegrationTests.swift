import IntegrationSupport
import Testing

/// Every suite that starts a redis-server, one after another: the deadline
/// checks measure milliseconds, and a 2-core machine running several servers
/// and load generators at once would measure the scheduler instead. The
/// whole suite also holds ``IntegrationLock/machine``, so tokengate's fleet
/// tests never run beside it.
@Suite(.serialized, .enabled(if: Integration.redis, "redis-server not installed"), .holdsMachineLock)
enum RedisIntegrationTests {}
