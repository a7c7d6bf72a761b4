import Foundation
import ImagePipeline
import Locking

/// Where DNS lookups run, and what bounds them. `getaddrinfo` blocks its thread and cannot be
/// cancelled, and a resolver that never answers holds it for the system's own timeouts: so
///
/// - a lookup runs on a thread of its own, at most `slots` at once, never on the cooperative
///   pool or Dispatch's (callers wait as continuations and hold no thread);
/// - one zone (a name's registrable domain, from the Public Suffix List: `example.co.uk`,
///   `xy.cc`) runs at most `perZone` lookups: a black-holed zone's names, however many, leave
///   the other slots to everyone else;
/// - names that have never resolved run in at most half the slots: a flood of new names
///   (across many zones) leaves the rest to the names the service already serves;
/// - one name is looked up once at a time, whoever asks, and its answer is kept
///   `positiveLifetime` (an empty one `negativeLifetime`): a flood of requests for one dead
///   name costs one lookup, not a slot each;
/// - once a name's answer has expired, its last good answer is served for `staleLifetime`
///   more while a refresh runs behind it: a resolver that stops answering (or a refresh stuck
///   in a full zone) does not take down the names it answered a moment ago;
/// - a caller stops waiting as soon as its task is cancelled (by the download timeout, say),
///   even one cancelled before it was registered; a lookup nobody waits for any more is
///   dropped before it starts.
final class LookupPool: @unchecked Sendable {
    // @unchecked: every field below `lock` is only touched while it is held.
    struct Limits: Sendable {
        var slots = 16
        var perZone = 4
        var positiveLifetime: Duration = .seconds(30)
        var negativeLifetime: Duration = .seconds(5)
        /// How long past its lifetime a name's last good answer is still served while a refresh
        /// runs.
        var staleLifetime: Duration = .seconds(300)
        /// Names kept in the cache; the oldest go first beyond it.
        var cachedNames = 1024
    }

    /// Lookups running and names waiting for a slot, for the gauges.
    struct Snapshot: Equatable, Sendable {
        var running: Int
        var waiting: Int
    }

    private typealias Continuation = CheckedContinuation<Result<[IPAddress], DataLoadingError>, Never>

    /// A name's last answer: fresh until `expires`; a good one is served stale until `staleUntil`.
    private struct Answer {
        var addresses: [IPAddress]
        var expires: ContinuousClock.Instant
        var staleUntil: ContinuousClock.Instant
    }

    let limits: Limits
    /// Whose zones the shares are.
    let suffixes: PublicSuffixList
    private let lookUp: @Sendable (String) -> [IPAddress]
    private let onChange: @Sendable (Snapshot) -> Void
    private let lock = Lock()
    private var running = 0
    private var runningByZone: [String: Int] = [:]
    /// Lookups running for names that have never resolved.
    private var runningUnseen = 0
    /// Names waiting for a slot, oldest first.
    private var queue: [String] = []
    /// Names queued or running (a refresh may have no waiter).
    private var pending: Set<String> = []
    /// Callers waiting for each name's answer (queued or running).
    private var waiters: [String: [UInt64: Continuation]] = [:]
    /// Callers that asked and are not registered yet, and those of them cancelled meanwhile.
    private var asking: Set<UInt64> = []
    private var cancelledEarly: Set<UInt64> = []
    private var nextWaiter: UInt64 = 0
    private var cache: [String: Answer] = [:]

    init(
        limits: Limits = Limits(), suffixes: PublicSuffixList = .system, lookUp: @escaping @Sendable (String) -> [IPAddress],
        onChange: @escaping @Sendable (Snapshot) -> Void = { _ in }
    ) {
        self.limits = limits
        self.suffixes = suffixes
        self.lookUp = lookUp
        self.onChange = onChange
    }

    /// The addresses of `host` (lowercased by the caller), from the cache or a lookup.
    func addresses(of host: String) async throws(DataLoadingError) -> [IPAddress] {
        let id = lock.withLock { () -> UInt64 in
            nextWaiter += 1
            asking.insert(nextWaiter)
            return nextWaiter
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                enqueue(host, id: id, continuation)
            }
        } onCancel: {
            abandon(host, id: id)
        }
        return try result.get()
    }

    /// Lookups running and waiting now.
    var snapshot: Snapshot { lock.withLock { Snapshot(running: running, waiting: queue.count) } }

    /// The zone `host` belongs to: its registrable domain.
    func zone(of host: String) -> String { suffixes.registrableDomain(of: host) }

    private func enqueue(_ host: String, id: UInt64, _ continuation: Continuation) {
        let answer = lock.withLock { () -> Result<[IPAddress], DataLoadingError>? in
            asking.remove(id)
            if cancelledEarly.remove(id) != nil { return .failure(.cancelled) }
            let now = ContinuousClock.now
            if let entry = cache[host] {
                if entry.expires > now { return .success(entry.addresses) }
                if !entry.addresses.isEmpty, entry.staleUntil > now {
                    // Served as it was; the refresh runs behind it.
                    queueLocked(host)
                    return .success(entry.addresses)
                }
            }
            queueLocked(host)
            waiters[host, default: [:]][id] = continuation
            return nil
        }
        if let answer { continuation.resume(returning: answer) }
        pump()
    }

    private func queueLocked(_ host: String) {
        guard pending.insert(host).inserted else { return }
        queue.append(host)
    }

    /// A caller gave up: it is answered `.cancelled` now; a name nobody waits for any more
    /// leaves the queue (a running lookup goes on, its slot held until it returns).
    private func abandon(_ host: String, id: UInt64) {
        let continuation = lock.withLock { () -> Continuation? in
            if asking.contains(id) {
                cancelledEarly.insert(id)
                return nil
            }
            guard let continuation = waiters[host]?.removeValue(forKey: id) else { return nil }
            if waiters[host]?.isEmpty == true, let index = queue.firstIndex(of: host) {
                queue.remove(at: index)
                pending.remove(host)
                waiters[host] = nil
            }
            return continuation
        }
        continuation?.resume(returning: .failure(.cancelled))
        report()
    }

    /// Starts every queued lookup there is a slot for, oldest first, within each zone's share
    /// and, for names never seen, within half the slots.
    private func pump() {
        let starting = lock.withLock { () -> [(host: String, unseen: Bool)] in
            var starting: [(String, Bool)] = []
            var index = 0
            while running < limits.slots, index < queue.count {
                let host = queue[index]
                let zone = zone(of: host)
                let unseen = cache[host].map { $0.addresses.isEmpty } ?? true
                guard runningByZone[zone, default: 0] < limits.perZone, !unseen || runningUnseen < max(1, limits.slots / 2) else {
                    index += 1
                    continue
                }
                queue.remove(at: index)
                running += 1
                if unseen { runningUnseen += 1 }
                runningByZone[zone, default: 0] += 1
                starting.append((host, unseen))
            }
            return starting
        }
        for (host, unseen) in starting {
            let thread = Thread { [self] in finish(host, unseen: unseen, lookUp(host)) }
            thread.name = "image-engine.dns"
            thread.start()
        }
        report()
    }

    private func finish(_ host: String, unseen: Bool, _ addresses: [IPAddress]) {
        let (answered, served) = lock.withLock { () -> ([Continuation], [IPAddress]) in
            running -= 1
            if unseen { runningUnseen -= 1 }
            pending.remove(host)
            let zone = zone(of: host)
            runningByZone[zone] = runningByZone[zone, default: 1] > 1 ? runningByZone[zone, default: 1] - 1 : nil
            let now = ContinuousClock.now
            // A refresh that found nothing leaves the last good answer what is served, stale.
            let keepsStale = cache[host].map { addresses.isEmpty && !$0.addresses.isEmpty && $0.staleUntil > now } ?? false
            if !keepsStale {
                if cache[host] == nil, cache.count >= limits.cachedNames,
                    let oldest = cache.min(by: { $0.value.expires < $1.value.expires })?.key
                {
                    cache[oldest] = nil
                }
                let lifetime = addresses.isEmpty ? limits.negativeLifetime : limits.positiveLifetime
                cache[host] = Answer(addresses: addresses, expires: now + lifetime, staleUntil: now + lifetime + limits.staleLifetime)
            }
            let served = cache[host]?.addresses ?? addresses
            return (Array((waiters.removeValue(forKey: host) ?? [:]).values), served)
        }
        for continuation in answered { continuation.resume(returning: .success(served)) }
        pump()
    }

    private func report() {
        onChange(snapshot)
    }
}
