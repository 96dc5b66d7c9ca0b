import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MoonmockCore

/// The shared store on the loop (`--store`): the loop owns a connection of its own
/// (``StoreChannel``); handlers' `mock.state` commands queue on it during the turn, go out in one
/// write at the turn's end, and their replies — read when the connection is readable — resume
/// the handlers on this loop.
extension EventLoop {
    /// On the loop's thread, as it starts.
    func attachStore() {
        loopThread = pthread_self()
        guard let store = serverRef._withUnsafeGuaranteedRef({ $0.engine.store }), let channel = store.makeChannel() else { return }
        storeChannel = channel
        StoreChannels.setCurrent(channel)
    }

    func detachStore() {
        StoreChannels.setCurrent(nil)
        if storeDescriptor >= 0 { poller.remove(storeDescriptor) }
        storeDescriptor = -1
        storeChannel = nil
    }

    /// Whether the caller runs on this loop's thread.
    var onLoopThread: Bool { loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }

    func storeReady(_ mask: PollMask) {
        guard let channel = storeChannel else { return }
        var unsent: Bool?
        if mask.contains(.output) { unsent = channel.flush() }
        if !mask.intersection([.input, .hangup, .error]).isEmpty { channel.readable() }
        syncStoreDescriptor(channel, wantsOutput: unsent)
    }

    /// The turn's commands go out in one write.
    func sendToStore(_ channel: any StoreChannel) {
        let unsent = channel.hasUnsent ? channel.flush() : false
        syncStoreDescriptor(channel, wantsOutput: unsent)
    }

    /// Watches the channel's descriptor (a new one after a reconnection), for output too while
    /// commands wait to be written.
    private func syncStoreDescriptor(_ channel: any StoreChannel, wantsOutput: Bool?) {
        let fd = channel.descriptor
        if fd != storeDescriptor {
            // The old connection was dropped (and closed by the channel).
            if storeDescriptor >= 0 { poller.closing(storeDescriptor) }
            storeDescriptor = fd
            storeWatchesOutput = false
            if fd >= 0 { poller.add(fd, .input) }
        }
        if let wants = wantsOutput ?? (channel.hasUnsent ? true : nil), fd >= 0, wants != storeWatchesOutput {
            storeWatchesOutput = wants
            poller.modify(fd, wants ? [.input, .output] : .input)
        }
    }
}
