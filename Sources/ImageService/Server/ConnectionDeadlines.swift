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
///
/// It also tells the listener's ``ConnectionShedder`` whether the connection has a request in
/// progress (from a request's end until its answer's end is written) or is waiting, so that a
/// full listener can close a waiting one at once rather than at its deadline.
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
    private let shedder: ConnectionShedder
    private var readDeadline: Scheduled<Void>?
    private var writeDeadline: Scheduled<Void>?
    private var writing = false
    /// Requests whose end has arrived and whose answer's end is not written yet (more than one
    /// when a client pipelines).
    private var inProgress = 0

    init(limits: Limits, shedder: ConnectionShedder) {
        self.limits = limits
        self.shedder = shedder
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { started(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        started(context)
        context.fireChannelActive()
    }

    private func started(_ context: ChannelHandlerContext) {
        armRead(context, limits.idle + limits.requestRead)
        shedder.opened(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: armRead(context, limits.requestRead)
        case .end:
            readDeadline?.cancel()
            readDeadline = nil
            inProgress += 1
            if inProgress == 1 { shedder.working(context.channel) }
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
        shedder.closed(context.channel)
        context.fireChannelInactive()
    }

    /// The answer's last byte is written: its deadline ends, and a keep-alive connection's next
    /// request gets the same bound as the first.
    private func answered(_ context: ChannelHandlerContext) {
        guard writing else { return }
        writing = false
        writeDeadline?.cancel()
        writeDeadline = nil
        inProgress = max(0, inProgress - 1)
        if inProgress == 0, context.channel.isActive { shedder.waiting(context.channel, since: .now()) }
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
