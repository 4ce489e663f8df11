"""Prints a pcap of QEMU's filter-dump one frame a line: ARP requests and replies, TCP
segments (addresses, ports, flags, payload length). `python3 pcap_dump.py FILE`"""
import struct,sys,socket
data=open(sys.argv[1],'rb').read(); off=24; i=0
while off+16<=len(data):
    ts,tu,incl,orig=struct.unpack_from("<IIII",data,off); f=data[off+16:off+16+incl]; off+=16+incl; i+=1
    t=ts+tu/1e6
    et=f[12:14]
    if et==b"\x08\x06":
        print(f"{t:.4f} ARP op{f[21]} who-has {socket.inet_ntoa(f[38:42])} tell {socket.inet_ntoa(f[28:32])}")
    elif et==b"\x08\x00" and f[23]==6:
        tcp=14+(f[14]&15)*4; sp,dp=struct.unpack_from(">HH",f,tcp); fl=f[tcp+13]
        names=''.join(n for b,n in [(2,'S'),(16,'A'),(1,'F'),(4,'R'),(8,'P')] if fl&b)
        ln=struct.unpack_from(">H",f,16)[0]-(f[14]&15)*4-(f[tcp+12]>>4)*4
        print(f"{t:.4f} TCP {socket.inet_ntoa(f[26:30])}:{sp} > {socket.inet_ntoa(f[30:34])}:{dp} {names} len {ln}")
    else:
        print(f"{t:.4f} other {et.hex()}")
