import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Bounds how long a client can hold a connection whatever it sends: the idle timeout alone
/// restarts with every byte, so a head or body trickled a byte at a time, or an answer nobody
/// reads, would hold a socket (and its request) forever, and 2,048 such clients lock everyone
/// out, `/health` included.
///
/// - **Reading a request**: from the connection's start, or the end of the previous answer,
///   until the request's end has arrived: `idle + requestRead` (the head arrives within the
///   idle timeout of a keep-alive connection, then the request has `requestRead` to finish). Its
///   head arriving restarts the clock at `requestRead`.
/// - **Writing an answer**: from its head until its last byte is handed to the kernel,
///   `responseWrite`.
///
/// Past either the connection is closed: there is no one to answer.
final class ConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    struct Limits: Sendable {
        /// How long a keep-alive connection may wait for the next request's head.
        var idle: TimeAmount
        /// How long a request may take to arrive, from its head to its end.
        var requestRead: TimeAmount
        /// How long an answer may take to be written, from its head to its end.
        var responseWrite: TimeAmount
    }

    private let limits: Limits
    private var readDeadline: Scheduled<Void>?
    private var writeDeadline: Scheduled<Void>?
    private var writing = false

    init(limits: Limits) {
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armRead(context, limits.idle + limits.requestRead) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armRead(context, limits.idle + limits.requestRead)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: armRead(context, limits.requestRead)
        case .end:
            readDeadline?.cancel()
            readDeadline = nil
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response) where response.status.kind != .informational && !writing:
            writing = true
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            writeDeadline = context.eventLoop.scheduleTask(in: limits.responseWrite) {
                bound.value.0.expire(bound.value.1)
            }
            context.write(data, promise: promise)
        case .end:
            let done = promise ?? context.eventLoop.makePromise()
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            done.futureResult.whenComplete { _ in
                let (handler, context) = bound.value
                handler.answered(context)
            }
            context.write(data, promise: done)
        default:
            context.write(data, promise: promise)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        readDeadline?.cancel()
        writeDeadline?.cancel()
        (readDeadline, writeDeadline) = (nil, nil)
        context.fireChannelInactive()
    }

    /// The answer's last byte is written: its deadline ends, and a keep-alive connection's next
    /// request gets the same bound as the first.
    private func answered(_ context: ChannelHandlerContext) {
        guard writing else { return }
        writing = false
        writeDeadline?.cancel()
        writeDeadline = nil
        if readDeadline == nil, context.channel.isActive { armRead(context, limits.idle + limits.requestRead) }
    }

    private func armRead(_ context: ChannelHandlerContext, _ amount: TimeAmount) {
        readDeadline?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        readDeadline = context.eventLoop.scheduleTask(in: amount) {
            bound.value.0.expire(bound.value.1)
        }
    }

    private func expire(_ context: ChannelHandlerContext) {
        (readDeadline, writeDeadline) = (nil, nil)
        context.close(promise: nil)
    }
}
