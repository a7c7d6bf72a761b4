import NIOCore
import Synchronization

/// Makes room when every connection a listener allows is taken, by closing the one that has
/// waited longest without a request in progress.
///
/// The deadlines (`ConnectionDeadlines`) end a connection that holds a slot without sending a
/// whole request, but only after `idle + requestRead` (20 s by default): 2,048 clients that
/// trickle heads or bodies, or that open connections and send nothing, would lock everyone
/// out, `/health` included, for that long, and again as soon as they reconnect. nginx answers
/// the same attack by reusing its idle keep-alive and lingering connections when it runs out;
/// this does that for every connection that is waiting for, or still receiving, a request
/// (after its answer, for the next one; a trickled head or body; the lingering close after an
/// error answer). A connection whose request is complete — being rendered, or its answer
/// written — is never closed here: it is bounded by the request and write deadlines.
///
/// Room is made as the last slot is taken (counting the connections this knows of, which
/// register a moment after they are accepted), so one slot is always free for whoever connects
/// next while any connection is waiting. A connection is never closed as it arrives, before it
/// could send a request. When every connection is working, the listener stops accepting, as
/// before.
final class ConnectionShedder: Sendable {
    private struct Connection: Sendable {
        let channel: any Channel
        /// When it last began waiting for a request; nil while a request is in progress.
        var waitingSince: NIODeadline?
        /// Closed to make room; it still counts until it is gone.
        var closing = false
    }

    private struct State: Sendable {
        var connections: [ObjectIdentifier: Connection] = [:]
        var closing = 0
    }

    /// The listener's cap on connections.
    let maximum: Int
    private let state = Mutex(State())

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// `channel` is open, since `time`, and waits for its first request.
    func opened(_ channel: any Channel, at time: NIODeadline = .now()) {
        update(channel, waitingSince: time, arriving: true)
    }

    /// `channel`'s last answer was written at `time`: it waits for the next request.
    func waiting(_ channel: any Channel, since time: NIODeadline) {
        update(channel, waitingSince: time, arriving: false)
    }

    /// `channel` has a whole request in progress.
    func working(_ channel: any Channel) {
        update(channel, waitingSince: nil, arriving: false)
    }

    func closed(_ channel: any Channel) {
        state.withLock { state in
            if state.connections.removeValue(forKey: ObjectIdentifier(channel))?.closing == true { state.closing -= 1 }
        }
    }

    /// Connections open and not being closed (tests).
    var count: Int { state.withLock { $0.connections.count - $0.closing } }

    private func update(_ channel: any Channel, waitingSince: NIODeadline?, arriving: Bool) {
        let key = ObjectIdentifier(channel)
        let victim = state.withLock { state -> (any Channel)? in
            let closing = state.connections[key]?.closing ?? false
            state.connections[key] = Connection(channel: channel, waitingSince: waitingSince, closing: closing)
            guard state.connections.count - state.closing >= maximum else { return nil }
            // The one that has waited longest, never one arriving now.
            var oldest: (key: ObjectIdentifier, since: NIODeadline)?
            for (candidate, connection) in state.connections where !connection.closing && !(arriving && candidate == key) {
                guard let since = connection.waitingSince else { continue }
                if oldest.map({ since < $0.since }) ?? true { oldest = (candidate, since) }
            }
            guard let oldest else { return nil }
            state.connections[oldest.key]?.closing = true
            state.closing += 1
            return state.connections[oldest.key]?.channel
        }
        victim?.close(promise: nil)
    }
}
