#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex.
///
/// Not `Synchronization.Mutex`: on Linux that waits on a raw futex, which the thread sanitizer
/// does not model, so it reports false races in correct code. pthread mutexes are understood
/// by TSan, and uncontended they cost about the same (a CAS in, a CAS out).
///
/// Package-visible, in a target of its own: the codec, the caches and the pipeline share it
/// rather than each having one.
@usableFromInline
package final class Lock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Every acquire retains the lock object: padding keeps locks allocated one after another
    /// (a sharded cache's) off each other's cache lines.
    @usableFromInline let padding = CacheLinePadding()

    /// Each mutex on cache lines of its own: locks allocated one after another (a sharded
    /// cache's) would otherwise share a line, and threads taking different locks would still
    /// pass that line between cores on every acquire.
    @usableFromInline static let footprint = 128

    @usableFromInline
    package init() {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: Swift.max(Self.footprint, MemoryLayout<pthread_mutex_t>.size),
            alignment: Self.footprint)
        mutex = raw.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        #if canImport(Glibc)
        // Adaptive: a waiter spins briefly before sleeping in the kernel. Critical sections here
        // are a dictionary lookup long, far shorter than a futex sleep and wake-up.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        #else
        pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    @inlinable @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// 128 bytes that nothing writes, placed after a hot object's fields so that the next
/// allocation's hot fields land on other cache lines (two lines: adjacent-line prefetch).
@usableFromInline
package struct CacheLinePadding: Sendable {
    @usableFromInline let bytes:
        (
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
        )
    @usableFromInline package init() { bytes = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) }
}
