import Foundation
import ImagePipeline
import Locking

/// Where DNS lookups run, and what bounds them. `getaddrinfo` blocks its thread and cannot be
/// cancelled, and a resolver that never answers holds it for the system's own timeouts: so
///
/// - a lookup runs on a thread of its own, at most `slots` at once, never on the cooperative
///   pool or Dispatch's (callers wait as continuations and hold no thread);
/// - one zone (a name's last two labels, three under a two-letter country code's short
///   second level, as `example.co.uk`) runs at most `perZone` lookups: a black-holed zone's
///   names, however many, leave the other slots to everyone else;
/// - one name is looked up once at a time, whoever asks, and its answer is kept
///   `positiveLifetime` (an empty one `negativeLifetime`): a flood of requests for one dead
///   name costs one lookup, not a slot each;
/// - a caller stops waiting as soon as its task is cancelled (by the download timeout, say);
///   a lookup nobody waits for any more is dropped before it starts.
final class LookupPool: @unchecked Sendable {
    // @unchecked: every field below `lock` is only touched while it is held.
    struct Limits: Sendable {
        var slots = 16
        var perZone = 4
        var positiveLifetime: Duration = .seconds(30)
        var negativeLifetime: Duration = .seconds(5)
        /// Names kept in the cache; the oldest go first beyond it.
        var cachedNames = 1024
    }

    /// Lookups running and names waiting for a slot, for the gauges.
    struct Snapshot: Equatable, Sendable {
        var running: Int
        var waiting: Int
    }

    let limits: Limits
    private let lookUp: @Sendable (String) -> [IPAddress]
    private let onChange: @Sendable (Snapshot) -> Void
    private let lock = Lock()
    private var running = 0
    private var runningByZone: [String: Int] = [:]
    /// Names waiting for a slot, oldest first.
    private var queue: [String] = []
    /// Callers waiting for each name's answer (queued or running).
    private var waiters: [String: [UInt64: CheckedContinuation<Result<[IPAddress], DataLoadingError>, Never>]] = [:]
    private var nextWaiter: UInt64 = 0
    private var cache: [String: (addresses: [IPAddress], expires: ContinuousClock.Instant)] = [:]

    init(
        limits: Limits = Limits(), lookUp: @escaping @Sendable (String) -> [IPAddress],
        onChange: @escaping @Sendable (Snapshot) -> Void = { _ in }
    ) {
        self.limits = limits
        self.lookUp = lookUp
        self.onChange = onChange
    }

    /// The addresses of `host` (lowercased by the caller), from the cache or a lookup.
    func addresses(of host: String) async throws(DataLoadingError) -> [IPAddress] {
        let id = lock.withLock { () -> UInt64 in
            nextWaiter += 1
            return nextWaiter
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[IPAddress], DataLoadingError>, Never>) in
                enqueue(host, id: id, continuation)
            }
        } onCancel: {
            abandon(host, id: id)
        }
        return try result.get()
    }

    /// Lookups running and waiting now.
    var snapshot: Snapshot { lock.withLock { Snapshot(running: running, waiting: queue.count) } }

    private func enqueue(_ host: String, id: UInt64, _ continuation: CheckedContinuation<Result<[IPAddress], DataLoadingError>, Never>) {
        let cached = lock.withLock { () -> [IPAddress]? in
            if let entry = cache[host], entry.expires > .now { return entry.addresses }
            cache[host] = nil
            if waiters[host] == nil { queue.append(host) }
            waiters[host, default: [:]][id] = continuation
            return nil
        }
        if let cached {
            continuation.resume(returning: .success(cached))
        } else {
            pump()
        }
    }

    /// A caller gave up: it is answered `.cancelled` now; a name nobody waits for any more
    /// leaves the queue (a running lookup goes on, its slot held until it returns).
    private func abandon(_ host: String, id: UInt64) {
        let continuation = lock.withLock { () -> CheckedContinuation<Result<[IPAddress], DataLoadingError>, Never>? in
            guard let continuation = waiters[host]?.removeValue(forKey: id) else { return nil }
            if waiters[host]?.isEmpty == true, let index = queue.firstIndex(of: host) {
                queue.remove(at: index)
                waiters[host] = nil
            }
            return continuation
        }
        continuation?.resume(returning: .failure(.cancelled))
        report()
    }

    /// Starts every queued lookup there is a slot for, oldest first, within each zone's share.
    private func pump() {
        let starting = lock.withLock { () -> [String] in
            var starting: [String] = []
            var index = 0
            while running < limits.slots, index < queue.count {
                let host = queue[index]
                let zone = Self.zone(of: host)
                guard runningByZone[zone, default: 0] < limits.perZone else {
                    index += 1
                    continue
                }
                queue.remove(at: index)
                running += 1
                runningByZone[zone, default: 0] += 1
                starting.append(host)
            }
            return starting
        }
        for host in starting {
            let thread = Thread { [self] in finish(host, lookUp(host)) }
            thread.name = "image-engine.dns"
            thread.start()
        }
        report()
    }

    private func finish(_ host: String, _ addresses: [IPAddress]) {
        let answered = lock.withLock { () -> [CheckedContinuation<Result<[IPAddress], DataLoadingError>, Never>] in
            running -= 1
            let zone = Self.zone(of: host)
            runningByZone[zone] = runningByZone[zone, default: 1] > 1 ? runningByZone[zone, default: 1] - 1 : nil
            let lifetime = addresses.isEmpty ? limits.negativeLifetime : limits.positiveLifetime
            if cache.count >= limits.cachedNames, let oldest = cache.min(by: { $0.value.expires < $1.value.expires })?.key {
                cache[oldest] = nil
            }
            cache[host] = (addresses, .now + lifetime)
            return Array((waiters.removeValue(forKey: host) ?? [:]).values)
        }
        for continuation in answered { continuation.resume(returning: .success(addresses)) }
        pump()
    }

    private func report() {
        onChange(snapshot)
    }

    /// The zone a name belongs to, for the per-zone share: its last two labels, or three when
    /// those are a two-letter country code under a short second level (`co.uk`, `com.au`).
    static func zone(of host: String) -> String {
        let labels = host.split(separator: ".")
        guard labels.count > 2 else { return host }
        let (second, top) = (labels[labels.count - 2], labels[labels.count - 1])
        let count = top.count == 2 && second.count <= 3 ? 3 : 2
        return labels.suffix(count).joined(separator: ".")
    }
}
