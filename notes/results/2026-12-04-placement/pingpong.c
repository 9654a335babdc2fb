/* The placement probe of notes/results/2026-12-04-placement.md, outside schedlab: every 0.2 s,
 * the least of 20 trials of 2000 round trips on one cache line between two threads pinned to
 * CPUs 0 and 1; prints "seconds one-way-ns". Build: gcc -O2 -pthread -o pingpong pingpong.c;
 * run: ./pingpong 60. (schedlab's own probe is model::probes::transfer_between, which
 * `compare` now runs before and after every run.) */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
static _Atomic unsigned long line __attribute__((aligned(64)));
static _Atomic int quit;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void* other(void*a){pin(1);unsigned long v;for(;;){v=atomic_load(&line);if(atomic_load(&quit))return 0;if(v&1)atomic_compare_exchange_strong(&line,&v,v+1);}}
int main(int argc,char**argv){
  int secs=argc>1?atoi(argv[1]):60; pin(0); pthread_t t;pthread_create(&t,0,other,0);
  double start=now();
  while(now()-start<secs*1e9){
    double best=1e18;
    for(int trial=0;trial<20;trial++){
      unsigned long v=atomic_load(&line); if(v&1){continue;}
      double t0=now(); int n=2000;
      for(int i=0;i<n;i++){unsigned long x=atomic_load(&line);atomic_store(&line,x+1);while(atomic_load(&line)==x+1);}
      double d=(now()-t0)/(2.0*n); if(d<best)best=d;
    }
    printf("%.2f %.1f\n",(now()-start)/1e9,best); fflush(stdout);
    usleep(200000);
  }
  atomic_store(&quit,1);pthread_join(t,0);return 0;}
