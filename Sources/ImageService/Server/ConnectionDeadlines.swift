import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Bounds how long a client can hold a connection whatever it sends, and what an answer may
/// hold in it: the idle timeout alone restarts with every byte, so a head or body trickled a
/// byte at a time, or an answer nobody reads, would hold a socket (and its request) forever,
/// and 2,048 such clients lock everyone out, `/health` included. These are the connection's
/// only timers (Hummingbird's own idle timer would cut an answer still being written: it
/// starts once the answer's end is handed over, not written).
///
/// - **Waiting for a request**: from the connection's start, or the end of the previous answer,
///   until a request's head has arrived: `idle` (`--keep-alive-timeout`).
/// - **Reading a request**: from its head until its end has arrived, `requestRead`, however
///   slowly it trickles.
/// - **Writing an answer**: from its head until its last byte is written to the socket,
///   `responseWrite`, however fast or slow the client reads.
///
/// Past any of them the connection is closed: there is no one to answer.
///
/// It also counts the answer's bytes handed to the connection and not yet written
/// (``OutboundWindow``): the answer's writer waits for room there, so an answer nobody reads
/// holds its own (charged) bytes and a window's worth in the connection, never a copy of itself.
///
/// And it tells the listener's ``ConnectionShedder`` whether the connection has a request in
/// progress (from a request's end until its answer's end is written) or is waiting — for a
/// request, or for a client that stopped reading its answer (the window is full) — so that a
/// full listener can close a waiting one at once rather than at its deadline.
final class ConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    struct Limits: Sendable {
        /// How long a connection may wait for a request's head (the first, or the next).
        var idle: TimeAmount
        /// How long a request may take to arrive, from its head to its end.
        var requestRead: TimeAmount
        /// How long an answer may take to be written, from its head to its end.
        var responseWrite: TimeAmount
    }

    private let limits: Limits
    private let shedder: ConnectionShedder
    /// The answer's bytes handed over and not yet written; created with the channel.
    private(set) var window: OutboundWindow?
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
        guard window == nil else { return }
        armRead(context, limits.idle)
        shedder.opened(context.channel)
        let (shedder, channel) = (shedder, context.channel)
        // A client that stops reading waits like an idle one: a full listener may shed it.
        window = OutboundWindow { stalled in
            if stalled { shedder.waiting(channel, since: .now()) } else { shedder.working(channel) }
        }
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
        case .body(let bytes):
            // The writer counted these bytes as it handed them over (before they crossed to the
            // event loop); they leave the window once written, or failed with the connection.
            let count = bytes.readableBytes
            let done = promise ?? context.eventLoop.makePromise()
            done.futureResult.whenComplete { [window] _ in window?.written(count) }
            context.write(data, promise: done)
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
        window?.close()
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
        if readDeadline == nil, context.channel.isActive { armRead(context, limits.idle) }
    }

    private func armRead(_ context: ChannelHandlerContext, _ amount: TimeAmount) {
        readDeadline?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        readDeadline = context.eventLoop.scheduleTask(in: amount) {
            bound.value.0.expire(bound.value.1)
        }
    }

    /// The window of `channel`'s handler, or nil when the channel has none.
    static func window(of channel: any Channel) async -> OutboundWindow? {
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: ConnectionDeadlines.self).window
        }.get()
    }

    private func expire(_ context: ChannelHandlerContext) {
        (readDeadline, writeDeadline) = (nil, nil)
        context.close(promise: nil)
    }
}
