import Locking
import NIOCore

/// Notices a client going away: the connection closing, or its input ending (a client that
/// gives up closes its socket; with half-closure allowed, NIO reports that as input closed
/// rather than closing the channel). Requests on the connection register what to cancel.
final class DisconnectWatcher: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    /// The connection's state, shared with the requests that run on it.
    let connection = ConnectionLiveness()

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { connection.close() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.close()
        context.fireChannelInactive()
    }

    /// The watcher's state for `channel`, or nil when the channel has no watcher.
    static func connection(of channel: any Channel) async -> ConnectionLiveness? {
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: DisconnectWatcher.self).connection
        }.get()
    }
}

/// Whether a client connection is still there, and what to do when it goes.
final class ConnectionLiveness: @unchecked Sendable {
    // @unchecked: the state is only touched while `lock` is held.
    private let lock = Lock()
    private var closed = false
    private var handlers: [Int: @Sendable () -> Void] = [:]
    private var nextHandler = 0

    /// Calls `handler` once when the connection goes (at once if it has gone); returns a token
    /// for `remove(_:)`.
    func onClose(_ handler: @escaping @Sendable () -> Void) -> Int? {
        let token = lock.withLock { () -> Int? in
            guard !closed else { return nil }
            nextHandler += 1
            handlers[nextHandler] = handler
            return nextHandler
        }
        if token == nil { handler() }
        return token
    }

    /// Forgets a handler (its request finished).
    func remove(_ token: Int?) {
        guard let token else { return }
        lock.withLock { _ = handlers.removeValue(forKey: token) }
    }

    func close() {
        let handlers = lock.withLock { () -> [@Sendable () -> Void] in
            guard !closed else { return [] }
            closed = true
            defer { self.handlers.removeAll() }
            return Array(self.handlers.values)
        }
        handlers.forEach { $0() }
    }
}
