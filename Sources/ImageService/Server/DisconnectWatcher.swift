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
/// channel — and only that cancels the request's work. An HTTP/1.0 client is never probed
/// (RFC 9110 forbids 1xx answers to it): its request runs on to its answer or its deadline.
///
/// It also bounds what any request may send after its head — the service reads no bodies: body
/// bytes beyond `maximumIgnoredBody` are dropped unread (the answer still goes out, then the
/// connection closes), and beyond `maximumDiscardedBody` (an endless chunked body, say) the
/// connection is closed at once; and an error answer to a request that came with a body (or an answer that says
/// `Connection: close`) closes it once written, so unread body bytes are never taken for the
/// next request. That close lingers: the output is closed first and whatever the client still
/// sends is read and dropped until it closes too (or `ConnectionDeadlines` ends it), because
/// closing with unread input makes the kernel reset the connection, and a reset can destroy the
/// error answer before the client reads it.
final class DisconnectWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Body bytes any request may carry before the rest is dropped unread.
    static let maximumIgnoredBody = 64 << 10
    /// Bytes read after the answer began, or dropped, before the connection is closed at once.
    static let maximumDiscardedBody = 1 << 20

    /// The connection's state, shared with the requests that run on it.
    let connection = ConnectionLiveness()
    /// Requests received whose answer has not begun.
    private var awaitingAnswers = 0
    private var ignoredBody = 0
    /// The request being answered announced or sent a body.
    private var requestHadBody = false
    private var closeAfterAnswer = false
    /// The answer is written and the output closed: input is read and dropped.
    private var lingering = false
    /// The request's body passed `maximumIgnoredBody`: the request was ended for the server
    /// there (it answers only ended requests), and everything after is dropped; the connection
    /// closes after the answer.
    private var cutShort = false
    private var probed = false
    /// Where the request heads' HTTP version is read (`RequestVersionSniffer`). It sees the
    /// heads this watcher sees, in the same order, so its last one is the request awaiting an
    /// answer.
    private let version = RequestVersionSniffer()

    func handlerAdded(context: ChannelHandlerContext) {
        // Behind the decoder, ahead of the codec that drops the version.
        RequestVersionSniffer.install(version, in: context.pipeline.syncOperations)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if case .body(let bytes) = part { ignoredBody += bytes.readableBytes }
        if ignoredBody > Self.maximumDiscardedBody {
            context.close(promise: nil)
            return
        }
        if lingering || cutShort { return }
        switch part {
        case .head(let request):
            awaitingAnswers += 1
            ignoredBody = 0
            let length = request.headerFields[.contentLength].flatMap { Int($0) } ?? 0
            requestHadBody = length > 0 || request.headerFields[.transferEncoding] != nil
        case .body(let bytes):
            requestHadBody = requestHadBody || bytes.readableBytes > 0
            if ignoredBody > Self.maximumIgnoredBody {
                cutShort = true
                context.fireChannelRead(wrapInboundOut(.end(nil)))
                return
            }
        case .end:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response) where response.status.kind != .informational:
            awaitingAnswers = max(0, awaitingAnswers - 1)
            let saysClose = response.headerFields[.connection]?.lowercased().contains("close") ?? false
            closeAfterAnswer = saysClose || (response.status.code >= 400 && requestHadBody)
            context.write(data, promise: promise)
        case .end where closeAfterAnswer:
            closeAfterAnswer = false
            let written = promise ?? context.eventLoop.makePromise()
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in
                let (watcher, context) = bound.value
                watcher.lingering = true
                context.close(mode: .output, promise: nil)
            }
            context.writeAndFlush(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingering, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed, awaitingAnswers > 0, !probed, !version.lastHeadIsHTTP10 {
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
