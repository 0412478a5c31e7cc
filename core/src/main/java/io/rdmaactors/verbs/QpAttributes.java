package io.rdmaactors.verbs;

import io.rdmaactors.cm.AddressVector;
import java.util.Set;

/**
 * QP attributes for {@link QueuePair#modify} and {@link QueuePair#query} ({@code struct ibv_qp_attr}).
 * A field left null is not in the modify mask; a query fills every field the QP has.
 */
public final class QpAttributes {

    private QpState state;
    private Set<Access> accessFlags;
    private Integer pkeyIndex;
    private Integer portNum;
    private Integer qkey;
    private Integer pathMtu;
    private Integer destQpNum;
    private Integer rqPsn;
    private Integer sqPsn;
    private Integer maxDestRdAtomic;
    private Integer maxRdAtomic;
    private Integer minRnrTimer;
    private Integer timeout;
    private Integer retryCount;
    private Integer rnrRetry;
    private AddressVector path;
    private AddressVector alternatePath;
    private Integer alternatePortNum;
    private Integer alternateTimeout;
    private MigrationState migrationState;

    public static QpAttributes of() {
        return new QpAttributes();
    }

    /** RESET to INIT: port, P_Key index and access rights (RC) or Q_Key (UD). */
    public static QpAttributes init(int portNum, Set<Access> access) {
        return new QpAttributes().state(QpState.INIT).portNum(portNum).pkeyIndex(0).accessFlags(access);
    }

    /** INIT to RTR for RC: where the peer is and what it may do here. */
    public static QpAttributes readyToReceive(AddressVector path, int destQpNum, int rqPsn) {
        return new QpAttributes().state(QpState.RTR).path(path).destQpNum(destQpNum).rqPsn(rqPsn).pathMtu(1024)
                .maxDestRdAtomic(16).minRnrTimer(12);
    }

    /** RTR to RTS: transport timeout and retry counts (7 RNR retries means retry forever). */
    public static QpAttributes readyToSend(int sqPsn) {
        return new QpAttributes().state(QpState.RTS).sqPsn(sqPsn).timeout(14).retryCount(7).rnrRetry(7)
                .maxRdAtomic(16);
    }

    public QpState state() { return state; }
    public QpAttributes state(QpState v) { state = v; return this; }
    public Set<Access> accessFlags() { return accessFlags; }
    public QpAttributes accessFlags(Set<Access> v) { accessFlags = v == null ? null : Set.copyOf(v); return this; }
    public Integer pkeyIndex() { return pkeyIndex; }
    public QpAttributes pkeyIndex(int v) { pkeyIndex = v; return this; }
    public Integer portNum() { return portNum; }
    public QpAttributes portNum(int v) { portNum = v; return this; }
    public Integer qkey() { return qkey; }
    public QpAttributes qkey(int v) { qkey = v; return this; }
    public Integer pathMtu() { return pathMtu; }
    public QpAttributes pathMtu(int v) { pathMtu = v; return this; }
    public Integer destQpNum() { return destQpNum; }
    public QpAttributes destQpNum(int v) { destQpNum = v; return this; }
    public Integer rqPsn() { return rqPsn; }
    public QpAttributes rqPsn(int v) { rqPsn = v; return this; }
    public Integer sqPsn() { return sqPsn; }
    public QpAttributes sqPsn(int v) { sqPsn = v; return this; }
    public Integer maxDestRdAtomic() { return maxDestRdAtomic; }
    public QpAttributes maxDestRdAtomic(int v) { maxDestRdAtomic = v; return this; }
    public Integer maxRdAtomic() { return maxRdAtomic; }
    public QpAttributes maxRdAtomic(int v) { maxRdAtomic = v; return this; }
    /** Encoded as in the IB spec (table 45): 1 is 0.01 ms, 12 is 0.64 ms, 0 is 655.36 ms. */
    public Integer minRnrTimer() { return minRnrTimer; }
    public QpAttributes minRnrTimer(int v) { minRnrTimer = v; return this; }
    /** Local ACK timeout: 4.096 us * 2^timeout. */
    public Integer timeout() { return timeout; }
    public QpAttributes timeout(int v) { timeout = v; return this; }
    public Integer retryCount() { return retryCount; }
    public QpAttributes retryCount(int v) { retryCount = v; return this; }
    public Integer rnrRetry() { return rnrRetry; }
    public QpAttributes rnrRetry(int v) { rnrRetry = v; return this; }
    /** The primary path ({@code ah_attr}). */
    public AddressVector path() { return path; }
    public QpAttributes path(AddressVector v) { path = v; return this; }
    /** The alternate path ({@code alt_ah_attr}) for automatic path migration. */
    public AddressVector alternatePath() { return alternatePath; }
    public QpAttributes alternatePath(AddressVector v) { alternatePath = v; return this; }
    public Integer alternatePortNum() { return alternatePortNum; }
    public QpAttributes alternatePortNum(int v) { alternatePortNum = v; return this; }
    public Integer alternateTimeout() { return alternateTimeout; }
    public QpAttributes alternateTimeout(int v) { alternateTimeout = v; return this; }
    public MigrationState migrationState() { return migrationState; }
    public QpAttributes migrationState(MigrationState v) { migrationState = v; return this; }

    @Override
    public String toString() {
        return "QpAttributes[state=" + state + ", port=" + portNum + ", destQp=" + destQpNum + ", path=" + path
                + ", alt=" + alternatePath + "@" + alternatePortNum + ", mig=" + migrationState + "]";
    }
}
