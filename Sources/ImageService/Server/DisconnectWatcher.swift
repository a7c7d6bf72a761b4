import HTTPTypes
import Locking
import NIOCore
import NIOHTTPTypes

/// Notices a client going away, and tells it apart from one that only finished sending.
///
/// A client that half-closes its connection after its request (`shutdown(SHUT_WR)`) and one
/// that closed it altogether look the same from here: the input ends. So when the input ends
/// while a request waits for its answer, the watcher writes a `103 Early Hints` interim
/// response, which HTTP/1.1 clients must read past: a half-closed client reads it and goes on
/// waiting for its answer; a gone one makes its kernel reset the connection, which closes the
/// channel — and only that cancels the request's work.
///
/// It also bounds what a GET or HEAD may send after its head: a body beyond
/// `maximumIgnoredBody` bytes (an endless chunked body, say) closes the connection.
final class DisconnectWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Body bytes a GET or HEAD may carry before its connection is closed.
    static let maximumIgnoredBody = 64 << 10

    /// The connection's state, shared with the requests that run on it.
    let connection = ConnectionLiveness()
    /// Requests received whose answer has not begun.
    private var awaitingAnswers = 0
    private var bodilessRequest = false
    private var ignoredBody = 0
    private var probed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            awaitingAnswers += 1
            bodilessRequest = request.method == .get || request.method == .head
            ignoredBody = 0
        case .body(let bytes) where bodilessRequest:
            ignoredBody += bytes.readableBytes
            if ignoredBody > Self.maximumIgnoredBody {
                context.close(promise: nil)
                return
            }
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let response) = unwrapOutboundIn(data), response.status.kind != .informational {
            awaitingAnswers = max(0, awaitingAnswers - 1)
        }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed, awaitingAnswers > 0, !probed {
            // Half-closed or gone: ask the connection (see the type's comment).
            probed = true
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .earlyHints))), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset connection (the probe's answer from a client that is gone) ends here too.
        connection.close()
        context.fireErrorCaught(error)
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
