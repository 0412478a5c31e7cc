package io.rdmaactors.ffm.binding;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import io.rdmaactors.jna.binding.ContextOps;
import io.rdmaactors.jna.binding.IbvAhAttr;
import io.rdmaactors.jna.binding.IbvAsyncEvent;
import io.rdmaactors.jna.binding.IbvDeviceAttr;
import io.rdmaactors.jna.binding.IbvPortAttr;
import io.rdmaactors.jna.binding.IbvQpAttr;
import io.rdmaactors.jna.binding.IbvQpInitAttr;
import io.rdmaactors.jna.binding.IbvSrqAttr;
import io.rdmaactors.jna.binding.IbvSrqInitAttr;
import io.rdmaactors.jna.binding.RdmaAddrinfo;
import io.rdmaactors.jna.binding.RdmaConnParam;
import io.rdmaactors.jna.binding.RdmaCore;
import io.rdmaactors.verbs.FabricUnavailableException;
import io.rdmaactors.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * rdma-core and libc through {@link Linker} downcalls: every exported function the provider calls,
 * each capturing errno into a segment of the calling thread (JNA's last error), and the inline
 * verbs through {@link FfmContextOps}. Pointers cross as {@code long}. A struct argument is the jna
 * binding's {@link Structure}, written to its memory before the call and read back after it. Small
 * out-parameters (and an eventfd's counter) go through a segment of the calling thread, so the
 * event pumps' waits allocate nothing; the byte arrays given to control-path calls are copied into a
 * confined arena per call. The class binds every function when it is initialised, so a library or
 * function missing there fails its initialisation ({@code FfmFabricProvider} says which, typed).
 */
public final class FfmRdmaCore extends RdmaCore {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup RDMA_CORE = RdmaCoreLibraries.load();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final ValueLayout J = ValueLayout.JAVA_LONG;
    private static final ValueLayout I = ValueLayout.JAVA_INT;
    private static final ValueLayout S = ValueLayout.JAVA_SHORT;
    private static final ValueLayout B = ValueLayout.JAVA_BYTE;

    private static final MethodHandle IBV_ACK_ASYNC_EVENT = function(RDMA_CORE, "ibv_ack_async_event", null, J);
    private static final MethodHandle IBV_ACK_CQ_EVENTS = function(RDMA_CORE, "ibv_ack_cq_events", null, J, I);
    private static final MethodHandle IBV_ALLOC_PD = function(RDMA_CORE, "ibv_alloc_pd", J, J);
    private static final MethodHandle IBV_ATTACH_MCAST = function(RDMA_CORE, "ibv_attach_mcast", I, J, J, S);
    private static final MethodHandle IBV_CREATE_AH = function(RDMA_CORE, "ibv_create_ah", J, J, J);
    private static final MethodHandle IBV_CREATE_COMP_CHANNEL = function(RDMA_CORE, "ibv_create_comp_channel", J, J);
    private static final MethodHandle IBV_CREATE_CQ = function(RDMA_CORE, "ibv_create_cq", J, J, I, J, J, I);
    private static final MethodHandle IBV_CREATE_QP = function(RDMA_CORE, "ibv_create_qp", J, J, J);
    private static final MethodHandle IBV_CREATE_SRQ = function(RDMA_CORE, "ibv_create_srq", J, J, J);
    private static final MethodHandle IBV_DEALLOC_PD = function(RDMA_CORE, "ibv_dealloc_pd", I, J);
    private static final MethodHandle IBV_DEREG_MR = function(RDMA_CORE, "ibv_dereg_mr", I, J);
    private static final MethodHandle IBV_DESTROY_AH = function(RDMA_CORE, "ibv_destroy_ah", I, J);
    private static final MethodHandle IBV_DESTROY_COMP_CHANNEL = function(RDMA_CORE, "ibv_destroy_comp_channel", I, J);
    private static final MethodHandle IBV_DESTROY_CQ = function(RDMA_CORE, "ibv_destroy_cq", I, J);
    private static final MethodHandle IBV_DESTROY_QP = function(RDMA_CORE, "ibv_destroy_qp", I, J);
    private static final MethodHandle IBV_DESTROY_SRQ = function(RDMA_CORE, "ibv_destroy_srq", I, J);
    private static final MethodHandle IBV_DETACH_MCAST = function(RDMA_CORE, "ibv_detach_mcast", I, J, J, S);
    private static final MethodHandle IBV_GET_ASYNC_EVENT = function(RDMA_CORE, "ibv_get_async_event", I, J, J);
    private static final MethodHandle IBV_GET_CQ_EVENT = function(RDMA_CORE, "ibv_get_cq_event", I, J, J, J);
    private static final MethodHandle IBV_GET_DEVICE_NAME = function(RDMA_CORE, "ibv_get_device_name", J, J);
    private static final MethodHandle IBV_MODIFY_QP = function(RDMA_CORE, "ibv_modify_qp", I, J, J, I);
    private static final MethodHandle IBV_MODIFY_SRQ = function(RDMA_CORE, "ibv_modify_srq", I, J, J, I);
    private static final MethodHandle IBV_QUERY_DEVICE = function(RDMA_CORE, "ibv_query_device", I, J, J);
    private static final MethodHandle IBV_QUERY_GID = function(RDMA_CORE, "ibv_query_gid", I, J, B, I, J);
    private static final MethodHandle IBV_QUERY_PORT = function(RDMA_CORE, "ibv_query_port", I, J, B, J);
    private static final MethodHandle IBV_QUERY_QP = function(RDMA_CORE, "ibv_query_qp", I, J, J, I, J);
    private static final MethodHandle IBV_REG_MR = function(RDMA_CORE, "ibv_reg_mr", J, J, J, J, I);
    private static final MethodHandle RDMA_ACCEPT = function(RDMA_CORE, "rdma_accept", I, J, J);
    private static final MethodHandle RDMA_ACK_CM_EVENT = function(RDMA_CORE, "rdma_ack_cm_event", I, J);
    private static final MethodHandle RDMA_BIND_ADDR = function(RDMA_CORE, "rdma_bind_addr", I, J, J);
    private static final MethodHandle RDMA_CONNECT = function(RDMA_CORE, "rdma_connect", I, J, J);
    private static final MethodHandle RDMA_CREATE_EVENT_CHANNEL = function(RDMA_CORE, "rdma_create_event_channel", J);
    private static final MethodHandle RDMA_CREATE_ID = function(RDMA_CORE, "rdma_create_id", I, J, J, J, I);
    private static final MethodHandle RDMA_CREATE_QP = function(RDMA_CORE, "rdma_create_qp", I, J, J, J);
    private static final MethodHandle RDMA_DESTROY_EVENT_CHANNEL = function(RDMA_CORE, "rdma_destroy_event_channel", null, J);
    private static final MethodHandle RDMA_DESTROY_ID = function(RDMA_CORE, "rdma_destroy_id", I, J);
    private static final MethodHandle RDMA_DESTROY_QP = function(RDMA_CORE, "rdma_destroy_qp", null, J);
    private static final MethodHandle RDMA_DISCONNECT = function(RDMA_CORE, "rdma_disconnect", I, J);
    private static final MethodHandle RDMA_FREE_DEVICES = function(RDMA_CORE, "rdma_free_devices", null, J);
    private static final MethodHandle RDMA_FREEADDRINFO = function(RDMA_CORE, "rdma_freeaddrinfo", null, J);
    private static final MethodHandle RDMA_GET_CM_EVENT = function(RDMA_CORE, "rdma_get_cm_event", I, J, J);
    private static final MethodHandle RDMA_GET_DEVICES = function(RDMA_CORE, "rdma_get_devices", J, J);
    private static final MethodHandle RDMA_GETADDRINFO = function(RDMA_CORE, "rdma_getaddrinfo", I, J, J, J, J);
    private static final MethodHandle RDMA_JOIN_MULTICAST = function(RDMA_CORE, "rdma_join_multicast", I, J, J, J);
    private static final MethodHandle RDMA_LEAVE_MULTICAST = function(RDMA_CORE, "rdma_leave_multicast", I, J, J);
    private static final MethodHandle RDMA_LISTEN = function(RDMA_CORE, "rdma_listen", I, J, I);
    private static final MethodHandle RDMA_MIGRATE_ID = function(RDMA_CORE, "rdma_migrate_id", I, J, J);
    private static final MethodHandle RDMA_REJECT = function(RDMA_CORE, "rdma_reject", I, J, J, B);
    private static final MethodHandle RDMA_RESOLVE_ADDR = function(RDMA_CORE, "rdma_resolve_addr", I, J, J, J, I);
    private static final MethodHandle RDMA_RESOLVE_ROUTE = function(RDMA_CORE, "rdma_resolve_route", I, J, I);
    private static final MethodHandle CLOSE = function(LIBC, "close", I, I);
    private static final MethodHandle EVENTFD = function(LIBC, "eventfd", I, I, I);
    /** {@code fcntl(fd, cmd, ...)}: its argument is variadic, which the ABI may pass differently. */
    private static final MethodHandle FCNTL = LINKER.downcallHandle(symbol(LIBC, "fcntl"),
            FunctionDescriptor.of(I, I, I, I), CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
    private static final MethodHandle GAI_STRERROR = function(LIBC, "gai_strerror", J, I);
    private static final MethodHandle POLL = function(LIBC, "poll", I, J, J, I);
    private static final MethodHandle READ = function(LIBC, "read", J, I, J, J);
    private static final MethodHandle STRERROR = function(LIBC, "strerror", J, I);
    private static final MethodHandle WRITE = function(LIBC, "write", J, I, J, J);

    private static final FunctionDescriptor ALLOC_MW = FunctionDescriptor.of(J, J, I);
    private static final FunctionDescriptor DEALLOC_MW = FunctionDescriptor.of(I, J);
    /** Downcalls to drivers' {@code ops} entries that have no exported symbol, by entry address. */
    private static final Map<Long, MethodHandle> OPS = new ConcurrentHashMap<>();

    /** Room for the out-parameters of one call, at most a GID (16 bytes). */
    private static final long SCRATCH = 16;

    private final ThreadLocal<ThreadSegments> segments = ThreadLocal.withInitial(ThreadSegments::allocate);

    /**
     * A thread's own segments, made once: errno as its last call left it, and a call's small
     * out-parameters, so that waiting for events allocates nothing per call.
     */
    private record ThreadSegments(MemorySegment state, MemorySegment scratch) {
        static ThreadSegments allocate() {
            Arena arena = Arena.ofAuto();
            return new ThreadSegments(arena.allocate(CALL_STATE), arena.allocate(SCRATCH, 8));
        }
    }

    private static MethodHandle function(SymbolLookup library, String name, MemoryLayout result,
            MemoryLayout... arguments) {
        FunctionDescriptor descriptor = result == null ? FunctionDescriptor.ofVoid(arguments)
                : FunctionDescriptor.of(result, arguments);
        return LINKER.downcallHandle(symbol(library, name), descriptor, CAPTURE_ERRNO);
    }

    private static MemorySegment symbol(SymbolLookup library, String name) {
        return library.find(name).orElseThrow(() -> new FabricUnavailableException("dlsym",
                name + " is missing from librdmacm/libibverbs/libc", null));
    }

    private MemorySegment state() {
        return segments.get().state();
    }

    private MemorySegment scratch() {
        return segments.get().scratch();
    }

    /** {@code bytes} of native memory for one call: the thread's scratch where they fit, else fresh. */
    private MemorySegment scratch(long bytes) {
        return bytes <= SCRATCH ? scratch() : Arena.ofAuto().allocate(bytes);
    }

    @Override
    public int errno() {
        return (int) ERRNO.get(state(), 0L);
    }

    @Override
    public ContextOps contextOps(long context) {
        return new FfmContextOps(context);
    }

    /** The struct's memory address once its fields are written there. */
    private static long written(Structure struct) {
        struct.write();
        return Pointer.nativeValue(struct.getPointer());
    }

    /** A copy of {@code bytes} in {@code arena}, or NULL for null. */
    private static long bytes(Arena arena, byte[] bytes) {
        return bytes == null ? 0 : arena.allocateFrom(ValueLayout.JAVA_BYTE, bytes).address();
    }

    /** {@code text} as a C string in {@code arena}, or NULL for null. */
    private static long string(Arena arena, String text) {
        return text == null ? 0 : arena.allocateFrom(text).address();
    }

    /** The C string at {@code address}, or null for NULL. */
    private static String string(long address) {
        return address == 0 ? null : MemorySegment.ofAddress(address).reinterpret(Integer.MAX_VALUE).getString(0);
    }

    @Override
    public long ibv_alloc_pd(long context) {
        try {
            return (long) IBV_ALLOC_PD.invokeExact(state(), context);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_dealloc_pd(long pd) {
        try {
            return (int) IBV_DEALLOC_PD.invokeExact(state(), pd);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long ibv_reg_mr(long pd, long addr, long length, int access) {
        try {
            return (long) IBV_REG_MR.invokeExact(state(), pd, addr, length, access);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_dereg_mr(long mr) {
        try {
            return (int) IBV_DEREG_MR.invokeExact(state(), mr);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long ibv_alloc_mw(long pd, int type) {
        long op = contextOp(pd, "ops.alloc_mw");
        if (op == 0) {
            ERRNO.set(state(), 0L, VerbsException.EOPNOTSUPP);
            return 0;
        }
        try {
            return (long) opsCall(op, ALLOC_MW).invokeExact(state(), pd, type);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_dealloc_mw(long mw) {
        long op = contextOp(mw, "ops.dealloc_mw");
        if (op == 0) {
            return VerbsException.EOPNOTSUPP;
        }
        try {
            return (int) opsCall(op, DEALLOC_MW).invokeExact(state(), mw);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    /** The {@code ops} entry at {@code path} of the context that the struct at {@code object} names first. */
    private static long contextOp(long object, String path) {
        long context = MemorySegment.ofAddress(object).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
        return MemorySegment.ofAddress(context).reinterpret(Structs.IBV_CONTEXT.byteSize())
                .get(ValueLayout.JAVA_LONG, CLayout.offset(Structs.IBV_CONTEXT, path));
    }

    private static MethodHandle opsCall(long op, FunctionDescriptor descriptor) {
        return OPS.computeIfAbsent(op, a -> LINKER.downcallHandle(MemorySegment.ofAddress(a), descriptor, CAPTURE_ERRNO));
    }

    @Override
    public long ibv_create_comp_channel(long context) {
        try {
            return (long) IBV_CREATE_COMP_CHANNEL.invokeExact(state(), context);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_destroy_comp_channel(long channel) {
        try {
            return (int) IBV_DESTROY_COMP_CHANNEL.invokeExact(state(), channel);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector) {
        try {
            return (long) IBV_CREATE_CQ.invokeExact(state(), context, cqe, cqContext, channel, compVector);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_destroy_cq(long cq) {
        try {
            return (int) IBV_DESTROY_CQ.invokeExact(state(), cq);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public void ibv_ack_cq_events(long cq, int count) {
        try {
            IBV_ACK_CQ_EVENTS.invokeExact(state(), cq, count);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_destroy_qp(long qp) {
        try {
            return (int) IBV_DESTROY_QP.invokeExact(state(), qp);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_destroy_srq(long srq) {
        try {
            return (int) IBV_DESTROY_SRQ.invokeExact(state(), srq);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_destroy_ah(long ah) {
        try {
            return (int) IBV_DESTROY_AH.invokeExact(state(), ah);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public void rdma_free_devices(long list) {
        try {
            RDMA_FREE_DEVICES.invokeExact(state(), list);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long rdma_create_event_channel() {
        try {
            return (long) RDMA_CREATE_EVENT_CHANNEL.invokeExact(state());
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public void rdma_destroy_event_channel(long channel) {
        try {
            RDMA_DESTROY_EVENT_CHANNEL.invokeExact(state(), channel);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_destroy_id(long id) {
        try {
            return (int) RDMA_DESTROY_ID.invokeExact(state(), id);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_resolve_route(long id, int timeoutMs) {
        try {
            return (int) RDMA_RESOLVE_ROUTE.invokeExact(state(), id, timeoutMs);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_listen(long id, int backlog) {
        try {
            return (int) RDMA_LISTEN.invokeExact(state(), id, backlog);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public void rdma_destroy_qp(long id) {
        try {
            RDMA_DESTROY_QP.invokeExact(state(), id);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_disconnect(long id) {
        try {
            return (int) RDMA_DISCONNECT.invokeExact(state(), id);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_ack_cm_event(long event) {
        try {
            return (int) RDMA_ACK_CM_EVENT.invokeExact(state(), event);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_migrate_id(long id, long channel) {
        try {
            return (int) RDMA_MIGRATE_ID.invokeExact(state(), id, channel);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public void rdma_freeaddrinfo(long result) {
        try {
            RDMA_FREEADDRINFO.invokeExact(state(), result);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int fcntl(int fd, int cmd, int arg) {
        try {
            return (int) FCNTL.invokeExact(state(), fd, cmd, arg);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int poll(long fds, long nfds, int timeoutMs) {
        try {
            return (int) POLL.invokeExact(state(), fds, nfds, timeoutMs);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int eventfd(int initval, int flags) {
        try {
            return (int) EVENTFD.invokeExact(state(), initval, flags);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int close(int fd) {
        try {
            return (int) CLOSE.invokeExact(state(), fd);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public String ibv_get_device_name(long device) {
        try {
            return string((long) IBV_GET_DEVICE_NAME.invokeExact(state(), device));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_query_device(long context, IbvDeviceAttr attr) {
        try {
            return (int) IBV_QUERY_DEVICE.invokeExact(state(), context, written(attr));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public int ibv_query_port(long context, byte portNum, IbvPortAttr attr) {
        try {
            return (int) IBV_QUERY_PORT.invokeExact(state(), context, portNum, written(attr));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public int ibv_query_gid(long context, byte portNum, int index, byte[] gid) {
        try {
            MemorySegment out = scratch();
            int rc = (int) IBV_QUERY_GID.invokeExact(state(), context, portNum, index, out.address());
            MemorySegment.copy(out, ValueLayout.JAVA_BYTE, 0, gid, 0, gid.length);
            return rc;
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_get_cq_event(long channel, long[] cq, long[] cqContext) {
        try {
            MemorySegment out = scratch();
            int rc = (int) IBV_GET_CQ_EVENT.invokeExact(state(), channel, out.address(), out.address() + 8);
            cq[0] = out.getAtIndex(ValueLayout.JAVA_LONG, 0);
            cqContext[0] = out.getAtIndex(ValueLayout.JAVA_LONG, 1);
            return rc;
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long ibv_create_qp(long pd, IbvQpInitAttr attr) {
        try {
            return (long) IBV_CREATE_QP.invokeExact(state(), pd, written(attr));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public int ibv_modify_qp(long qp, IbvQpAttr attr, int mask) {
        try {
            return (int) IBV_MODIFY_QP.invokeExact(state(), qp, written(attr), mask);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public int ibv_query_qp(long qp, IbvQpAttr attr, int mask, IbvQpInitAttr init) {
        try {
            return (int) IBV_QUERY_QP.invokeExact(state(), qp, written(attr), mask, written(init));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
            init.read();
        }
    }

    @Override
    public long ibv_create_srq(long pd, IbvSrqInitAttr attr) {
        try {
            return (long) IBV_CREATE_SRQ.invokeExact(state(), pd, written(attr));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public int ibv_modify_srq(long srq, IbvSrqAttr attr, int mask) {
        try {
            return (int) IBV_MODIFY_SRQ.invokeExact(state(), srq, written(attr), mask);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public long ibv_create_ah(long pd, IbvAhAttr attr) {
        try {
            return (long) IBV_CREATE_AH.invokeExact(state(), pd, written(attr));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public int ibv_attach_mcast(long qp, byte[] gid, short lid) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) IBV_ATTACH_MCAST.invokeExact(state(), qp, bytes(arena, gid), lid);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_detach_mcast(long qp, byte[] gid, short lid) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) IBV_DETACH_MCAST.invokeExact(state(), qp, bytes(arena, gid), lid);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int ibv_get_async_event(long context, IbvAsyncEvent event) {
        try {
            return (int) IBV_GET_ASYNC_EVENT.invokeExact(state(), context, written(event));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            event.read();
        }
    }

    @Override
    public void ibv_ack_async_event(IbvAsyncEvent event) {
        try {
            IBV_ACK_ASYNC_EVENT.invokeExact(state(), written(event));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long rdma_get_devices(int[] count) {
        try {
            MemorySegment out = scratch();
            long list = (long) RDMA_GET_DEVICES.invokeExact(state(), out.address());
            count[0] = out.get(ValueLayout.JAVA_INT, 0);
            return list;
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_create_id(long channel, long[] id, long context, int portSpace) {
        try {
            MemorySegment out = scratch();
            int rc = (int) RDMA_CREATE_ID.invokeExact(state(), channel, out.address(), context, portSpace);
            id[0] = out.get(ValueLayout.JAVA_LONG, 0);
            return rc;
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_bind_addr(long id, byte[] address) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) RDMA_BIND_ADDR.invokeExact(state(), id, bytes(arena, address));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_resolve_addr(long id, byte[] source, byte[] destination, int timeoutMs) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) RDMA_RESOLVE_ADDR.invokeExact(state(), id, bytes(arena, source), bytes(arena, destination),
                    timeoutMs);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_create_qp(long id, long pd, IbvQpInitAttr attr) {
        try {
            return (int) RDMA_CREATE_QP.invokeExact(state(), id, pd, written(attr));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        } finally {
            attr.read();
        }
    }

    @Override
    public int rdma_connect(long id, RdmaConnParam param) {
        try {
            return (int) RDMA_CONNECT.invokeExact(state(), id, written(param));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_accept(long id, RdmaConnParam param) {
        try {
            return (int) RDMA_ACCEPT.invokeExact(state(), id, written(param));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_reject(long id, byte[] privateData, byte length) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) RDMA_REJECT.invokeExact(state(), id, bytes(arena, privateData), length);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_get_cm_event(long channel, long[] event) {
        try {
            MemorySegment out = scratch();
            int rc = (int) RDMA_GET_CM_EVENT.invokeExact(state(), channel, out.address());
            event[0] = out.get(ValueLayout.JAVA_LONG, 0);
            return rc;
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_join_multicast(long id, byte[] address, long context) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) RDMA_JOIN_MULTICAST.invokeExact(state(), id, bytes(arena, address), context);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_leave_multicast(long id, byte[] address) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) RDMA_LEAVE_MULTICAST.invokeExact(state(), id, bytes(arena, address));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int rdma_getaddrinfo(String node, String service, RdmaAddrinfo hints, long[] result) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = scratch();
            int rc = (int) RDMA_GETADDRINFO.invokeExact(state(), string(arena, node), string(arena, service),
                    written(hints), out.address());
            result[0] = out.get(ValueLayout.JAVA_LONG, 0);
            return rc;
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long read(int fd, byte[] buffer, long count) {
        try {
            MemorySegment in = scratch(count);
            long n = (long) READ.invokeExact(state(), fd, in.address(), count);
            if (n > 0) {
                MemorySegment.copy(in, ValueLayout.JAVA_BYTE, 0, buffer, 0, (int) n);
            }
            return n;
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public long write(int fd, byte[] buffer, long count) {
        try {
            MemorySegment out = scratch(count);
            MemorySegment.copy(buffer, 0, out, ValueLayout.JAVA_BYTE, 0, (int) count);
            return (long) WRITE.invokeExact(state(), fd, out.address(), count);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public String strerror(int errno) {
        try {
            return string((long) STRERROR.invokeExact(state(), errno));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public String gai_strerror(int code) {
        try {
            return string((long) GAI_STRERROR.invokeExact(state(), code));
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }
}
